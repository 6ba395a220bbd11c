#!/usr/bin/env python3
"""Seeds for the .gopclntab fuzzer (tests/fuzz/fuzz_gopclntab.c), cut from
a real Go binary's table.

usage: gopclntab_seeds.py BINARY OUTDIR

BINARY is a Go 1.18/1.19 amd64 program (tests/bin/gospin-stripped: table
magic 0xfffffff0).  A whole table is ~400 KB, too big to fuzz well, so a
few functions are cut out of it (the main package's and a run of
crypto/sha256's and the runtime's), with their names, files and pc-value
tables, and written again in each layout the reader knows:

    seed-go12     Go 1.2-1.15  (0xfffffffb), files as global indexes
    seed-go116    Go 1.16-1.17 (0xfffffffa), absolute entry PCs
    seed-go118    Go 1.18-1.19 (0xfffffff0), entries as text offsets
    seed-go120    Go 1.20+     (0xfffffff1), _func with startLine
    seed-go118-be the 1.18 layout big-endian, 4-byte pointers

The text start is the binary's .text address (0x401000 for gospin); the
fuzzer passes the same.  Also prints "LAYOUT PC FUNC FILE LINE" for a few
PCs, as this script decodes them, for tests/unit/unit.c.
"""
import struct
import subprocess
import sys


def section(path, name):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == name:
            addr, off, size = int(f[3], 16), int(f[4], 16), int(f[5], 16)
            with open(path, "rb") as fh:
                fh.seek(off)
                return addr, fh.read(size)
    raise SystemExit(f"{path}: no section {name}")


def uvarint(d, p):
    x = s = 0
    while True:
        b = d[p]
        p += 1
        x |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return x, p


def put_uvarint(x):
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pairs(d, off):
    """The (value delta, pc delta) pairs of the pc-value table at OFF."""
    out, p, first = [], off, True
    while True:
        uv, p = uvarint(d, p)
        if uv == 0 and not first:
            return out
        dv = ~(uv >> 1) if uv & 1 else uv >> 1
        dpc, p = uvarint(d, p)
        out.append((dv, dpc))
        first = False


def encode(ps):
    out = bytearray()
    for dv, dpc in ps:
        out += put_uvarint(((dv << 1) ^ (dv >> 31)) & 0xFFFFFFFF)
        out += put_uvarint(dpc)
    return bytes(out + b"\0")


def values(ps):
    v, out = -1, []
    for dv, dpc in ps:
        v += dv
        out.append((v, dpc))
    return out


def from_values(vs):
    prev, out = -1, []
    for v, dpc in vs:
        out.append((v - prev, dpc))
        prev = v
    return out


class Func:
    pass


def parse118(d, text):
    assert struct.unpack_from("<I", d)[0] == 0xFFFFFFF0 and d[7] == 8
    w = struct.unpack_from("<8Q", d, 8)
    nfunc, _, _, names, cutab, filetab, pctab, pcln = w
    funcs = []
    for i in range(nfunc):
        entry, foff = struct.unpack_from("<II", d, pcln + 8 * i)
        rec = pcln + foff
        f = Func()
        f.entry = text + entry
        f.end = text + struct.unpack_from("<I", d, pcln + 8 * (i + 1))[0]
        _, nameoff, f.args, f.defer, pcsp, pcfile, pcln_, npcdata, cuoff = struct.unpack_from("<9I", d, rec)
        f.name = d[names + nameoff:d.index(b"\0", names + nameoff)]
        f.pcsp = pairs(d, pctab + pcsp) if pcsp else []
        f.pcln = pairs(d, pctab + pcln_) if pcln_ else []
        # Files: the CU-relative numbers turned into names.
        f.files = []
        for v, dpc in values(pairs(d, pctab + pcfile) if pcfile else []):
            fo = struct.unpack_from("<I", d, cutab + 4 * (cuoff + v))[0]
            f.files.append((d[filetab + fo:d.index(b"\0", filetab + fo)], dpc))
        f.funcid = d[rec + 36]
        funcs.append(f)
    return funcs


def pick(funcs):
    """A few runs of consecutive functions, in address order (the table
    is sorted; a run's last function reaches up to the next run)."""
    idx = {f.name: i for i, f in enumerate(funcs)}
    out = []
    for name, before, after in ((b"main.mixBytes", 1, 4), (b"crypto/sha256.block", 1, 1),
                                (b"runtime.futex", 1, 1), (b"runtime.goexit", 0, 1)):
        i = idx[name]
        out += funcs[i - before:i + after + 1]
    return sorted(out, key=lambda f: f.entry)


def build(funcs, ver, big=False, ptr=8, text=0x401000):
    e = ">" if big else "<"
    P = "Q" if ptr == 8 else "I"
    magic = {12: 0xFFFFFFFB, 116: 0xFFFFFFFA, 118: 0xFFFFFFF0, 120: 0xFFFFFFF1}[ver]
    n = len(funcs)
    end = max(f.end for f in funcs)
    names = bytearray()
    nameoff = []
    for f in funcs:
        nameoff.append(len(names))
        names += f.name + b"\0"
    files = []                      # distinct names, in first-use order
    for f in funcs:
        for name, _ in f.files:
            if name not in files:
                files.append(name)
    pct = bytearray(b"\0")          # offset 0 means "no table"
    tabs = []
    for f in funcs:
        if ver == 12:               # global 1-based file indexes
            fv = [(files.index(nm) + 1, dpc) for nm, dpc in f.files]
        else:                       # one CU per function, listing all files
            fv = [(files.index(nm), dpc) for nm, dpc in f.files]
        t = []
        for ps in (f.pcsp, from_values(fv), f.pcln):
            if ps:
                t.append(len(pct))
                pct += encode(ps)
            else:
                t.append(0)
        tabs.append(t)
    filetab = bytearray()
    fileoff = []
    for nm in files:
        fileoff.append(len(filetab))
        filetab += nm + b"\0"

    def funcrec(i, f):
        pcsp, pcfile, pcln = tabs[i]
        if ver == 12:
            return struct.pack(e + P + "IIIIIIII", f.entry, 0, f.args, 0, pcsp, pcfile, pcln, 0, 0)
        head = struct.pack(e + ("I" if ver >= 118 else P), f.entry - text if ver >= 118 else f.entry)
        body = struct.pack(e + "IIIIIIII", nameoff[i], f.args, f.defer, pcsp, pcfile, pcln, 0, 0)
        if ver >= 120:
            body += struct.pack(e + "i", 0)
        return head + body + bytes([f.funcid, 0, 0, 0])

    if ver == 12:
        # header, nfunc, functab, filetab offset, then everything else,
        # addressed from the table's start.
        fsz = ptr
        ftab_off = 8 + ptr
        recs_off = ftab_off + (2 * n + 1) * fsz + 4
        recs = bytearray()
        offs = []
        for i, f in enumerate(funcs):
            offs.append(recs_off + len(recs))
            recs += funcrec(i, f)
        names_off = recs_off + len(recs)
        pct_off = names_off + len(names)
        strs_off = pct_off + len(pct)
        ftab_files = strs_off + len(filetab)
        # fix up name, pc-table and file offsets (all from the start)
        recs = bytearray()
        for i, f in enumerate(funcs):
            pcsp, pcfile, pcln = (t + pct_off if t else 0 for t in tabs[i])
            recs += struct.pack(e + P + "IIIIIIII", f.entry, names_off + nameoff[i], f.args, 0,
                                pcsp, pcfile, pcln, 0, 0)
        out = bytearray(struct.pack(e + "I", magic) + bytes([0, 0, 1, ptr]))
        out += struct.pack(e + P, n)
        for i, f in enumerate(funcs):
            out += struct.pack(e + P + P, f.entry, offs[i])
        out += struct.pack(e + P, end)
        out += struct.pack(e + "I", ftab_files)
        out += recs + names + pct + filetab
        out += struct.pack(e + "I", len(files) + 1)
        for fo in fileoff:
            out += struct.pack(e + "I", strs_off + fo)
        return bytes(out)

    cutab = bytearray()
    for fo in fileoff:
        cutab += struct.pack(e + "I", fo)
    nw = 8 if ver >= 118 else 7
    hdr = 8 + nw * ptr
    o_names = hdr
    o_cu = o_names + len(names)
    o_file = o_cu + len(cutab)
    o_pct = o_file + len(filetab)
    o_pcln = o_pct + len(pct)
    fsz = 4 if ver >= 118 else ptr
    ftab = bytearray()
    recs = bytearray()
    rec0 = (2 * n + 1) * fsz
    for i, f in enumerate(funcs):
        pc = f.entry - text if ver >= 118 else f.entry
        ftab += struct.pack(e + ("I" if fsz == 4 else P) * 2, pc, rec0 + len(recs))
        recs += funcrec(i, f)
    ftab += struct.pack(e + ("I" if fsz == 4 else P), end - text if ver >= 118 else end)
    out = bytearray(struct.pack(e + "I", magic) + bytes([0, 0, 1, ptr]))
    words = [n, len(files)] + ([text] if ver >= 118 else []) + [o_names, o_cu, o_file, o_pct, o_pcln]
    out += struct.pack(e + P * nw, *words)
    out += names + cutab + filetab + pct + ftab + recs
    return bytes(out)


def lookup_expect(funcs, pc):
    for f in funcs:
        if f.entry <= pc < f.end:
            line = v = -1
            x = f.entry
            for val, dpc in values(f.pcln):
                x += dpc
                if pc < x:
                    line = val
                    break
            x, fn = f.entry, None
            for nm, dpc in f.files:
                x += dpc
                if pc < x:
                    fn = nm
                    break
            return f.name.decode(), (fn or b"").decode(), line
    return None


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    text, _ = section(binary, ".text")
    _, tab = section(binary, ".gopclntab")
    funcs = pick(parse118(tab, text))
    seeds = {"go12": (12, False, 8), "go116": (116, False, 8), "go118": (118, False, 8),
             "go120": (120, False, 8), "go118-be": (118, True, 4)}
    for name, (ver, big, ptr) in seeds.items():
        with open(f"{outdir}/seed-{name}", "wb") as fh:
            fh.write(build(funcs, ver, big, ptr, text))
    for f in funcs:
        if f.name in (b"main.mixBytes", b"crypto/sha256.block", b"runtime.goexit"):
            for pc in (f.entry, f.entry + (f.end - f.entry) // 2):
                print(hex(pc), *lookup_expect(funcs, pc))


main()
