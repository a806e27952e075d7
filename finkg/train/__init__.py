"""Fine-tuning, as the seeds do it: the embedder (seed 002, :mod:`finkg.train.embedder`) and the reader's LoRA SFT
(seed 004, :mod:`finkg.train.reader`); what both share is :mod:`finkg.train.common`."""
