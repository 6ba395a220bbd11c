module cprof-attach/bench/fgprof

go 1.19

require github.com/felixge/fgprof v0.9.2
