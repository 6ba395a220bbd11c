// A Rust program for the demangling tests (tests/t_names.sh): the main
// thread computes in spin::heavy and in a trait method called through a
// trait object, <spin::Hasher as spin::Worker>::run.  Built by the test
// with rustc -O -g twice: with the default (legacy) symbol mangling,
// "_ZN4spin5heavy17h<hash>E", and with -C symbol-mangling-version=v0,
// "_RNvCs..._4spin5heavy".  Writes its PID to the ready file (argv[1]) like
// the C targets: PATH.tmp, then renamed to PATH.
use std::hint::black_box;

pub trait Worker {
    fn run(&mut self) -> u64;
}

pub struct Hasher {
    state: u64,
}

impl Worker for Hasher {
    #[inline(never)]
    fn run(&mut self) -> u64 {
        let mut x = self.state;
        for i in 0..2_000_000u64 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        self.state = x;
        x
    }
}

#[inline(never)]
pub fn heavy(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = black_box(acc.rotate_left(5) ^ i.wrapping_mul(0x9e3779b97f4a7c15));
    }
    acc
}

fn ready(path: &str) {
    let tmp = format!("{}.tmp", path);
    std::fs::write(&tmp, format!("{}\n", std::process::id())).expect("write ready file");
    std::fs::rename(&tmp, path).expect("rename ready file");
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: spin READY_FILE");
    let mut hasher = Hasher { state: 1 };
    let worker: &mut dyn Worker = black_box(&mut hasher);
    ready(&path);
    loop {
        black_box(heavy(black_box(2_000_000)));
        black_box(worker.run());
    }
}
