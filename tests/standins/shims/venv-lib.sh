# A virtual environment whose python, hf and aiperf are the stand-ins (`uv venv DIR`, `python3 -m venv DIR`):
# made at once, as the real ones are made from packages the stand-ins already stand for.
_standin_venv() {
    local dir=$1 tool target
    mkdir -p "$dir/bin" && printf 'export PATH=%q:"$PATH"\n' "$dir/bin" > "$dir/bin/activate"
    for tool in python python3 pip hf aiperf; do
        target=$tool
        [[ "$tool" == python ]] && target=python3
        printf '#!/bin/bash\nexec %q "$@"\n' "$_standin_root/bin/$target" > "$dir/bin/$tool"
        chmod +x "$dir/bin/$tool"
    done
}
