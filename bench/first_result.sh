#!/usr/bin/env bash
# Times the README's main command on a fresh Debian 12 system: a minbase chroot with
# nothing but the repository cloned into it (and CUDA bind-mounted read-only, as every
# machine of ours has it). Prints every line of main.sh's output prefixed with the
# seconds since the start, then the time of the first compiled example.
#   usage: bash bench/first_result.sh CHROOT_DIR [COMMIT]   (as root, host with debootstrap)
set -euo pipefail
root=${1:?usage: first_result.sh CHROOT_DIR [COMMIT]}
commit=${2:-HEAD}
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$root" ]; then echo "$root exists; give a new directory" >&2; exit 2; fi
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
git clone -q "$repo" "$root/root/argus"
git -C "$root/root/argus" checkout -q "$(git -C "$repo" rev-parse "$commit")"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mkdir -p "$root/usr/local/cuda"
mount --bind -o ro /usr/local/cuda "$root/usr/local/cuda"
trap 'umount "$root/usr/local/cuda" "$root/dev" "$root/proc" || true' EXIT
echo "commit $(git -C "$root/root/argus" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
set +e  # report main.sh's status rather than stop on it
chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c 'cd /root/argus && bash scripts/main.sh' 2>&1 |
  while IFS= read -r line; do
    printf '%7.1f %s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$line"
  done
status=${PIPESTATUS[0]}
echo "main.sh exited with status $status"
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
