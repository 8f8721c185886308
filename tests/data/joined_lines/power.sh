amd-smi static --csv 2>&1 | head -3 | tee -a "$GPU_POWER_LOG"
echo "=== end diagnostics ===" | tee -a "$GPU_POWER_LOG"

# Write CSV header
echo "timestamp,gpu,power_w" > "$GPU_POWER_CSV"
first_iter=true
(
  while false; do
    if [ "$first_iter" = true ]; then
      python3 -c "
" "$csv_output" >> "$GPU_POWER_CSV" 2>/dev/null
    fi
  done
) &
DONE=yes
