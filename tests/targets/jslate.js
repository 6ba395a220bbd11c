// jslate.js READY: a function first run (so first compiled) late, run by
// `node --perf-basic-prof` (tests/t_jitgrow.sh).  Spins in earlyWork, in
// slices (so that signals get in), and writes READY (its PID); on
// SIGUSR2 it spins in lateWork instead, a function never called before:
// V8 compiles it then, and appends its name to /tmp/perf-PID.map long
// after a profiler read the map first (in lateSlice, its own slice
// function).  Writes READY.late once it has run 50 slices.
'use strict';
const fs = require('fs');

function earlyWork(n) {
	let a = 1;
	for (let i = 0; i < n; i++)
		a = (a * 31 + i) % 1000003;
	return a;
}

function lateWork(n) {
	let a = 7;
	for (let i = 0; i < n; i++)
		a = (a * 17 + (i ^ a)) % 999983;
	return a;
}

function announce(path) {
	fs.writeFileSync(path + '.tmp', process.pid + '\n');
	fs.renameSync(path + '.tmp', path);
}

const ready = process.argv[2];
let late = false, slices = 0, lateSlices = 0, sink = 0;
process.on('SIGUSR2', () => { late = true; });
function slice() {
	const until = Date.now() + 10;
	while (Date.now() < until)
		sink += earlyWork(20000);
	if (++slices === 20 && ready)
		announce(ready);
	setImmediate(late ? lateSlice : slice);
}
// Its own slice function too: V8 would inline lateWork into slice, and
// the late code would bear slice's name.
function lateSlice() {
	const until = Date.now() + 10;
	while (Date.now() < until)
		sink += lateWork(20000);
	if (++lateSlices === 50 && ready)
		announce(ready + '.late');
	setImmediate(lateSlice);
}
slice();
