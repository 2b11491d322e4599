#!/bin/sh
# Rebuild the decoder oracle libraries from our own sources (src/) and dump them with llvm-objdump-22.
# Usage: tests/data/decoder/build.sh   (needs clang-22, ld.lld-22, llvm-mc-22, llvm-objdump-22)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for cpu in v68 v73 v75 v79 v81; do
    objects=""
    for source in "$here"/src/*.c; do
        name=$(basename "$source" .c)
        clang-22 --target=hexagon-unknown-none-elf -mcpu=hexagon$cpu -mhvx -mhvx-length=128b -O3 -fPIC -ffreestanding \
            -c "$source" -o "$work/$name-$cpu.o"
        objects="$objects $work/$name-$cpu.o"
    done
    for source in "$here"/src/*.s; do
        name=$(basename "$source" .s)
        llvm-mc-22 -triple=hexagon -mcpu=hexagon$cpu -mhvx -filetype=obj "$source" -o "$work/$name-$cpu.o"
        objects="$objects $work/$name-$cpu.o"
    done
    # shellcheck disable=SC2086
    ld.lld-22 -shared --hash-style=sysv $objects -o "$here/decoder-$cpu.so"
    (cd "$here" && llvm-objdump-22 -d --mcpu=hexagon$cpu "decoder-$cpu.so" | gzip -9n > "decoder-$cpu.so.objdump.gz")
done
