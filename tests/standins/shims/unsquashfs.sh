# unsquashfs: `-l FILE` lists a squash file that exists (an import made it), fails for one that does not.
for _a in "$@"; do _last=$_a; done
[[ -f "$_last" ]] || { echo "Could not open $_last, because No such file or directory" >&2; exit 1; }
echo "squashfs-root"
