"""Programs standing in for what needs a GPU fleet, and a sandbox to run real recipes with them.

- ``install.install(dest, vendor=...)``: docker, srun/salloc/sbatch/squeue/
  scancel/scontrol, enroot, ``hf``, nvidia-smi or amd-smi/rocm-smi, the
  inference servers (``vllm serve``, ``sglang serve``, ``python3 -m
  sglang.launch_server`` / ``atom.entrypoints.openai_server`` /
  ``sglang_router.launch_router``, ``trtllm-serve``) and the benchmark client
  (``python3 .../utils/bench_serving/benchmark_serving.py``), as executables
  in ``dest/bin``.  Each records its argv and environment; the servers answer
  the health and completion endpoints; the client writes InferenceX's
  ``--save-result`` file.  No network, no GPU, no waiting.
- ``record.read_calls(dest / "log")``: what was run, in order.
- ``sandbox.run_sandboxed``: a command in namespaces of its own, where
  ``/workspace`` and the like can be written without touching the machine.
"""
