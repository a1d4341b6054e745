"""The estimator against published peak-memory figures (docs/ESTIMATES.md, "Validation").

Each case carries its citation. The estimate must be within 25 % of the cited figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

# Realistic inputs: the GPUs and models the catalog service ships (its one copy of them).
from gpux_catalog.adapters.files import load_model_catalog
from gpux_estimator import (
    ESTIMATOR_CONSTANTS,
    Method,
    Optimizer,
    TargetModules,
    TrainingSettings,
    estimate_memory,
)

pytestmark = pytest.mark.unit

TOLERANCE = 0.25
TORCHTUNE = (
    "pytorch/torchtune README.md, 'Memory and training speed' (batch size 2, packed to "
    "sequence length 2048, torch compile), https://github.com/pytorch/torchtune#memory-and-training-speed"
)
UNSLOTH = (
    "unslothai/unsloth README.md, 'Context length benchmarks - Llama 3.1 (8B) max. context "
    "length', column 'Hugging Face + FA2' (4-bit QLoRA on all linear layers, rank 32, batch "
    "size 1), https://github.com/unslothai/unsloth#context-length-benchmarks"
)
QLORA_PAPER = (
    "Dettmers et al. 2023, QLoRA, arXiv:2305.14314, abstract: 'finetune a 65B parameter model "
    "on a single 48GB GPU'; settings from artidoro/qlora scripts/finetune_guanaco_65b.sh"
)


@dataclass(frozen=True)
class Case:
    """One cited measurement and the settings it was taken with."""

    label: str
    model_id: str
    settings: TrainingSettings
    cited_gb: float
    citation: str
    # torchtune logs torch.cuda.max_memory_reserved(), which excludes the CUDA context.
    excludes_cuda_context: bool = False


def torchtune(
    label: str,
    model_id: str,
    method: Method,
    *,
    lora_rank: int,
    cited_gb: float,
    config: str,
    num_gpus: int = 1,
) -> Case:
    """A torchtune README row: its recipes share batch 2, packing to 2,048 tokens, fused loss."""
    return Case(
        label,
        model_id,
        TrainingSettings(
            method=method,
            seq_len=2048,
            micro_batch=2,
            lora_rank=lora_rank,
            target_modules=TargetModules.ALL_LINEAR,
            fused_loss=True,
            num_gpus=num_gpus,
        ),
        cited_gb,
        f"{TORCHTUNE}; config recipes/configs/llama3_1/{config}.yaml",
        excludes_cuda_context=True,
    )


CASES = [
    torchtune(
        "torchtune Llama 3.1 8B QLoRA, 1x RTX 4090: 7.4 GiB",
        "llama-3.1-8b",
        Method.QLORA,
        lora_rank=8,
        cited_gb=7.4,
        config="8B_qlora_single_device",
    ),
    torchtune(
        "torchtune Llama 3.1 8B LoRA, 1x RTX 4090: 16.2 GiB",
        "llama-3.1-8b",
        Method.LORA,
        lora_rank=8,
        cited_gb=16.2,
        config="8B_lora_single_device",
    ),
    torchtune(
        "torchtune Llama 3.1 70B LoRA, 8x A100 (FSDP): 27.6 GiB per GPU",
        "llama-3.1-70b",
        Method.LORA,
        lora_rank=16,
        cited_gb=27.6,
        config="70B_lora",
        num_gpus=8,
    ),
    *[
        Case(
            f"Unsloth README, HF + FA2, Llama 3.1 8B QLoRA fills {vram} GB at {seq:,} tokens",
            "llama-3.1-8b",
            TrainingSettings(
                method=Method.QLORA,
                seq_len=seq,
                micro_batch=1,
                lora_rank=32,
                target_modules=TargetModules.ALL_LINEAR,
                optimizer=Optimizer.ADAMW_8BIT,
            ),
            float(vram),
            UNSLOTH + f": {vram} GB -> {seq:,}",
        )
        for vram, seq in [(16, 2551), (24, 5789), (40, 12264), (48, 15502), (80, 28454)]
    ],
    Case(
        "QLoRA paper: LLaMA 65B finetuned on a single 48 GB GPU",
        "llama-65b",
        TrainingSettings(
            method=Method.QLORA,
            seq_len=528,
            micro_batch=4,
            lora_rank=64,
            target_modules=TargetModules.ALL_LINEAR,
            optimizer=Optimizer.PAGED_ADAMW_32BIT,
        ),
        48.0,
        QLORA_PAPER,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_estimate_within_25_percent_of_the_cited_peak(case: Case) -> None:
    estimate = estimate_memory(load_model_catalog().get(case.model_id), case.settings).total_gb
    if case.excludes_cuda_context:
        estimate -= ESTIMATOR_CONSTANTS.cuda_context_gib
    deviation = estimate / case.cited_gb - 1
    assert abs(deviation) <= TOLERANCE, (
        f"{case.label}: estimate {estimate:.2f} GB is {deviation:+.0%} off; source: {case.citation}"
    )
