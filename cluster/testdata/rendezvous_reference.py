#!/usr/bin/env python3
"""Reference implementation of fraktor-go's rendezvous owner selection.

Written from the XXH64 specification and docs/identity.md only (no Go code),
so that another language can check it computes the same owners. Running it
prints the golden vectors pinned in cluster/rendezvous_golden_test.go.
"""
import math
import struct

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F,
                      0x165667B19E3779F9, 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def rnd(acc, lane):
    acc = (acc + lane * P2) & M
    return (rotl(acc, 31) * P1) & M


def merge(acc, val):
    acc ^= rnd(0, val)
    return (acc * P1 + P4) & M


def xxh64(data: bytes, seed: int) -> int:
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i + 32 <= n:
            for j in range(4):
                v[j] = rnd(v[j], struct.unpack_from("<Q", data, i + 8 * j)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for x in v:
            h = merge(h, x)
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h ^= rnd(0, struct.unpack_from("<Q", data, i)[0])
        h = (rotl(h, 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from("<I", data, i)[0] * P1) & M
        h = (rotl(h, 23) * P2 + P3) & M
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M
        h = (rotl(h, 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h


def lp(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def member_hash(seed, member_id):
    return xxh64(lp(member_id), seed)


def identity_hash(seed, kind, ident):
    return xxh64(lp(kind) + lp(ident), seed)


def score(seed, mh, ih):
    return xxh64(struct.pack("<QQ", mh, ih), seed)


def weighted(s, w):
    u = ((s >> 12) + 0.5) * 2.0 ** -52
    return -float(w or 1) / math.log(u)


def owner(seed, members, kind, ident, use_weights):
    """members: list of (id, weight, kinds) sorted by id; returns id or None."""
    ih = identity_hash(seed, kind, ident)
    best = None
    for mid, w, kinds in members:
        if kind not in kinds:
            continue
        s = score(seed, member_hash(seed, mid), ih)
        key = (weighted(s, w), s) if use_weights else (s,)
        if best is None or key > best[0]:
            best = (key, mid)
    return best and best[1]


SEED = 0x21726F746B617266  # "fraktor!" little-endian (DefaultHashSeed)
MEMBERS = [("node-a", 1, {"account", "cart"}), ("node-b", 3, {"account"}),
           ("node-c", 1, {"account", "cart"}), ("node-d", 5, {"account", "cart"}),
           ("node-e", 2, {"cart"})]
IDENTITIES = [("account", str(i)) for i in range(8)] + [("cart", "x%d" % i) for i in range(4)] + [("ab", "c"), ("a", "bc")]

if __name__ == "__main__":
    assert xxh64(b"", 0) == 0xEF46DB3751D8E999
    assert xxh64(b"abc", 0) == 0x44BC2CF5AD770999
    print("member_hash node-a %016x" % member_hash(SEED, "node-a"))
    for k, i in IDENTITIES[-2:]:
        print("identity_hash %s/%s %016x" % (k, i, identity_hash(SEED, k, i)))
    mh, ih = member_hash(SEED, "node-a"), identity_hash(SEED, "account", "0")
    print("score node-a account/0 %016x" % score(SEED, mh, ih))
    print("weighted score 3 %s" % weighted(score(SEED, mh, ih), 3).hex())
    for k, i in IDENTITIES[:12]:
        print("owner %s/%s plain=%s weighted=%s" % (k, i, owner(SEED, MEMBERS, k, i, False), owner(SEED, MEMBERS, k, i, True)))
