"""Issue 18's GPU run of the reader's LoRA SFT on a machine without Neo4j (the device tool's GPU machine).

It is ``finkg train reader TATQA --base-model <GGUF>`` with seed 004's defaults
(:class:`finkg.train.reader.ReaderConfig`), called through :func:`finkg.train.reader.run` without the graph: the
CLI checks the Neo4j registry before it trains, and the device machine runs no server. The model registry node
is written when the adapter is used here. TF32 matrix products are allowed (the weights stay float32).

Environment (all paths on the machine that trains):
    GGUF     the base model's GGUF file (rebuilt once as a Hugging Face checkpoint in HF_DIR)
    HF_DIR   where that checkpoint goes
    TATQA    tatqa_dataset_dev.json (its training half is used; the split is checked)
    RUN_DIR  the run folder (checkpoints, adapter/, loss.png, examples.jsonl)
    RESULTS  where train-reader.json is written
    MAX_STEPS (optional) stop after this many steps; RESUME=1 continues from RUN_DIR's newest checkpoint

    PYTHONPATH=. GGUF=... HF_DIR=... TATQA=... RUN_DIR=... RESULTS=... python bench/train_reader_device.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch

from finkg.train import reader


def main() -> int:
    """Rebuild the base checkpoint, train, print the summary; returns the exit status."""
    torch.backends.cuda.matmul.allow_tf32 = True
    t0 = time.time()
    base = reader.hf_checkpoint_from_gguf(Path(os.environ["GGUF"]), Path(os.environ["HF_DIR"]))
    print(f"hf checkpoint {base} in {time.time() - t0:.0f} s", flush=True)
    summary = reader.run(
        Path(os.environ["TATQA"]),
        base,
        Path(os.environ["RUN_DIR"]),
        reader.ReaderConfig(max_steps=int(os.environ.get("MAX_STEPS", "-1"))),
        resume=os.environ.get("RESUME") == "1",
        results_dir=Path(os.environ["RESULTS"]),
        log=lambda m: print(m, flush=True),
    )
    print(summary, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
