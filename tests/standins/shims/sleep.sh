# sleep: what a recipe waits for is there at once, so every wait is at most 0.05 s (`sleep infinity` stays).
for _a in "$@"; do
    case "$_a" in inf|infinity) exec "$_standin_sleep" infinity ;; esac
done
exec "$_standin_sleep" 0.05
