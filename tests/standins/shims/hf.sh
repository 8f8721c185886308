# hf / huggingface-cli: `download REPO [--local-dir DIR]` fills DIR (or the snapshot directory in the hub cache)
# with a complete checkpoint of empty files (config, tokenizer, a shard index and the shard it names), as the model
# caches of the fleet hold one, and prints the directory. A dataset (--repo-type dataset) is an empty directory.
if [[ "$1" == download ]]; then
    shift
    _repo= _local= _type=model _cache=${HF_HUB_CACHE:-$HOME/.cache/huggingface/hub}
    while (( $# )); do
        case "$1" in
            --local-dir=*) _local=${1#*=} ;;
            --local-dir) _local=$2; shift ;;
            --cache-dir=*) _cache=${1#*=} ;;
            --cache-dir) _cache=$2; shift ;;
            --repo-type=*) _type=${1#*=} ;;
            --repo-type) _type=$2; shift ;;
            --revision|--include|--exclude|--token|--max-workers) shift ;;
            -*) ;;
            *) [[ -z "$_repo" ]] && _repo=$1 ;;
        esac
        shift
    done
    _repo=${_repo:-unknown/model}
    if [[ -z "$_local" ]]; then
        # The hub cache's layout: the snapshot of a revision, and refs/main naming it (what a reader of the
        # cache resolves first).
        _local=$_cache/models--${_repo//\//--}/snapshots/0000000000000000000000000000000000000000
        mkdir -p "${_local%/snapshots/*}/refs" 2>/dev/null && echo 0000000000000000000000000000000000000000 > "${_local%/snapshots/*}/refs/main"
    fi
    if mkdir -p "$_local" 2>/dev/null && [[ "$_type" == model ]]; then
        for _f in config.json tokenizer_config.json tokenizer.json; do [[ -e "$_local/$_f" ]] || echo '{}' > "$_local/$_f"; done
        [[ -e "$_local/model.safetensors.index.json" ]] || \
            echo '{"metadata": {}, "weight_map": {"w": "model-00001-of-00001.safetensors"}}' > "$_local/model.safetensors.index.json"
        : >> "$_local/model-00001-of-00001.safetensors"
    fi
    printf '%s\n' "$_local"
elif [[ "$1" == auth || "$1" == whoami ]]; then
    echo "user: standin"
fi
exit 0
