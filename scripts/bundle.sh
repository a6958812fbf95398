#!/usr/bin/env bash
# Packs built Argus binaries with every shared library they load (the dynamic
# loader and glibc included) into one archive, so that they run on a machine
# that has no LLVM, Z3 or ANTLR installed, such as the GPU benchmark machine:
#   bash scripts/bundle.sh OUT.tar.xz build/argus-agent build/argusc
#   (there) tar xJf OUT.tar.xz && argus-bundle/run argus-agent ...
# The loader is invoked explicitly with --library-path, so the host's own
# glibc and libstdc++ versions do not matter; libcuda still comes from the
# host (dlopen searches LD_LIBRARY_PATH and the host's cache after our libs).
set -euo pipefail
out=$1; shift
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/argus-bundle
mkdir -p "$root/bin" "$root/lib"
for bin in "$@"; do
  cp "$bin" "$root/bin/"
  ldd "$bin" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | while read -r lib; do
    cp -Ln "$lib" "$root/lib/" 2>/dev/null || true
  done
done
strip --strip-unneeded "$root"/bin/* 2>/dev/null || true
# The shared libLLVM (argus-agent's; argusc links LLVM statically) links libxml2 (for
# Windows manifests), which links ICU, whose 30 MB data
# table nothing Argus runs ever reads; a stub with the same soname and symbol keeps
# the bundle under the device machine's 64 MiB transfer limit.
for data in "$root"/lib/libicudata.so.*; do
  [ -e "$data" ] || continue
  soname=$(basename "$data")
  symbol=$(nm -D "$data" | awk '/ R icudt[0-9]+_dat$/ {print $3}')
  [ -n "$symbol" ] || continue
  echo "const unsigned char $symbol[32] = {0};" >"$stage/icudata_stub.c"
  cc -shared -fPIC -Wl,-soname,"$soname" -o "$data" "$stage/icudata_stub.c"
done
cat >"$root/run" <<'RUN'
#!/usr/bin/env bash
# run TOOL ARGS...: runs bin/TOOL with the bundled loader and libraries.
here=$(cd "$(dirname "$0")" && pwd)
tool=$1; shift
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$here/bin/$tool" "$@"
RUN
chmod +x "$root/run"
tar -C "$stage" -cf - argus-bundle | xz -T2 -6 >"$out"
echo "bundle: $out ($(du -h "$out" | cut -f1))"
