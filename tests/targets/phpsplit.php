<?php
// A PHP program with a known split, for cprof-attach's PHP frames.
//
// One thread, in cycles of about 100 ms: computing (compute_outer ->
// compute_middle -> compute_inner) ~40%, usleep() ~30%, stream_select() on
// a pipe nobody writes to, with a timeout, ~30%.  Each phase is timed by
// its own clock (hrtime).  argv[1]: a file written once it runs (its PID);
// argv[2]: a file rewritten after each cycle with the truth since the
// start, "compute PCT", "usleep PCT", "select PCT".  Runs until killed.

function compute_inner($n)
{
    $s = 0;
    for ($i = 0; $i < $n; $i++) {
        $s += $i * $i;
    }
    return $s;
}

function compute_middle($until)
{
    while (hrtime(true) < $until) {
        compute_inner(2000);
    }
}

function compute_outer($ms)
{
    compute_middle(hrtime(true) + $ms * 1000000);
}

$fifo = $argv[2] . '.fifo';
@unlink($fifo);
posix_mkfifo($fifo, 0600);
$pipe = fopen($fifo, 'r+'); // a pipe nobody else writes to (r+: no wait for a writer)
file_put_contents($argv[1], getmypid() . "\n");
$t = ['compute' => 0, 'usleep' => 0, 'select' => 0];
while (true) {
    $a = hrtime(true);
    compute_outer(40);
    $b = hrtime(true);
    usleep(30000);
    $c = hrtime(true);
    $r = [$pipe];
    $w = null;
    $e = null;
    stream_select($r, $w, $e, 0, 30000);
    $d = hrtime(true);
    $t['compute'] += $b - $a;
    $t['usleep'] += $c - $b;
    $t['select'] += $d - $c;
    $all = array_sum($t);
    $out = '';
    foreach ($t as $k => $v) {
        $out .= sprintf("%s %.2f\n", $k, 100.0 * $v / $all);
    }
    file_put_contents($argv[2] . '.tmp', $out);
    rename($argv[2] . '.tmp', $argv[2]);
}
