#!/bin/sh
# Build the codeduet sandbox root filesystem as a tarball, offline from any image registry.
#
#   docker/build-rootfs.sh OUTPUT.tar SUITE PKG[,PKG...]
#   e.g. docker/build-rootfs.sh /tmp/rootfs.tar bookworm python3,python3-numpy,python3-pytest,procps
#
# Needs Debian's `mmdebstrap` (apt-get install -y mmdebstrap; on Ubuntu also debian-archive-keyring)
# and root (or unprivileged user namespaces for --mode=unshare; MMDEBSTRAP_MODE overrides, default auto).
# Packages come from this machine's own apt sources for SUITE; with none, mmdebstrap's default mirror.
# Also writes OUTPUT.python (the Python version inside). Output appears atomically (built as .partial).
set -eu

out=${1:?usage: build-rootfs.sh OUTPUT.tar SUITE PKG[,PKG...]}
suite=${2:?missing SUITE (e.g. bookworm)}
packages=${3:?missing comma-separated package list}
mode=${MMDEBSTRAP_MODE:-auto}

command -v mmdebstrap >/dev/null 2>&1 || {
    echo "mmdebstrap not found: install it with \`sudo apt-get install -y mmdebstrap\`" >&2
    exit 127
}

# This machine's apt sources that mention SUITE (Debian hosts); each file is pasted into the chroot.
set --
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && grep -Eq "^[^#]*[[:space:]]$suite([[:space:]]|$)" "$f" && set -- "$@" "$f"
done
keyring=""
if [ $# -eq 0 ]; then
    echo "no apt sources for $suite on this machine (not Debian?): using mmdebstrap's default mirror" >&2
    # Non-Debian hosts (Ubuntu CI) do not trust Debian's keys by default: apt-get install debian-archive-keyring.
    [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && keyring=/usr/share/keyrings/debian-archive-keyring.gpg
fi

partial="$out.partial"
export CODEDUET_PYTHON_OUT="$out.python.partial"
rm -f "$partial" "$CODEDUET_PYTHON_OUT"
# merged-/usr via mmdebstrap's hook, else apt pulls usrmerge and with it ~50 MB of perl.
hooks=/usr/share/mmdebstrap/hooks/merged-usr
hookdir=""
[ -d "$hooks" ] && hookdir="--hook-dir=$hooks"
# Space savers: no docs/man/info/locales/bundled test suites (copyright files kept), no apt lists or caches.
mmdebstrap --mode="$mode" --variant=minbase --format=tar ${hookdir:+"$hookdir"} ${keyring:+"--keyring=$keyring"} \
    --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --customize-hook='chroot "$1" python3 -c "import platform; print(platform.python_version())" > "$CODEDUET_PYTHON_OUT"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/apt/* "$1"/var/cache/debconf/*-old "$1"/var/lib/dpkg/*-old' \
    --customize-hook='find "$1/usr/lib/python3/dist-packages" -type d -name tests -prune -exec rm -rf {} +' \
    "$suite" "$partial" "$@"
mv "$CODEDUET_PYTHON_OUT" "$out.python"
mv "$partial" "$out"
echo "rootfs: $out ($(du -h "$out" | cut -f1), python $(cat "$out.python"))" >&2
