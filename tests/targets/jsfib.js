// jsfib.js READY: recursive JavaScript under a named chain, run by
// `node --perf-basic-prof` (tests/t_runtimes.sh): V8 compiles it to JIT
// code named only by /tmp/perf-PID.map, which keeps a frame-pointer chain.
// Writes READY (its PID) once the functions have run hot for a while.
'use strict';
const fs = require('fs');

function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function jsMiddle(n) {
	return fib(n) + fib(n - 1);
}

function jsOuter() {
	let s = 0;
	for (let i = 0; i < 8; i++)
		s += jsMiddle(20 + (i & 1));
	return s;
}

const ready = process.argv[2];
let rounds = 0;
let sink = 0;
for (;;) {
	sink += jsOuter();
	if (++rounds === 200 && ready) {
		fs.writeFileSync(ready + '.tmp', process.pid + '\n');
		fs.renameSync(ready + '.tmp', ready);
	}
	if (sink < 0)
		break;
}
