<?php
// A php-fpm request for cprof-attach's PHP frames: about 20 ms computing
// in handle_request -> request_inner, then "ok".

function request_inner($n)
{
    $s = 0;
    for ($i = 0; $i < $n; $i++) {
        $s += $i * $i;
    }
    return $s;
}

function handle_request()
{
    $until = hrtime(true) + 20000000;
    while (hrtime(true) < $until) {
        request_inner(500);
    }
    echo "ok\n";
}

handle_request();
