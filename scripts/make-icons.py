#!/usr/bin/env python3
"""Draws static/icon-192.png and static/icon-512.png from the favicon's design (static/favicon.svg:
a rounded blue square with three bars), with the standard library only. Run it if the favicon
changes; the PNGs are committed (the web app manifest names them for installing the app)."""
import struct, zlib, pathlib

BLUE, WHITE, ORANGE, SKY = (0x00, 0x72, 0xB2), (255, 255, 255), (0xE6, 0x9F, 0x00), (0x56, 0xB4, 0xE9)
# The favicon's shapes on its 32x32 grid: (x, y, w, h, colour).
BARS = [(6, 7, 20, 4, WHITE), (6, 14, 14, 4, ORANGE), (6, 21, 9, 4, SKY)]

def pixel(x, y, n):
    u, v = x * 32 / n, y * 32 / n
    r = 6  # corner radius
    cx, cy = min(max(u, r), 32 - r), min(max(v, r), 32 - r)
    if (u - cx) ** 2 + (v - cy) ** 2 > r * r:
        return (0, 0, 0, 0)
    for bx, by, bw, bh, c in BARS:
        if bx <= u < bx + bw and by <= v < by + bh:
            return c + (255,)
    return BLUE + (255,)

def png(n):
    rows = b''.join(b'\0' + bytes(v for x in range(n) for v in pixel(x, y, n)) for y in range(n))
    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', n, n, 8, 6, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows, 9)) + chunk(b'IEND', b'')

static = pathlib.Path(__file__).resolve().parent.parent / 'static'
for n in (192, 512):
    (static / f'icon-{n}.png').write_bytes(png(n))
