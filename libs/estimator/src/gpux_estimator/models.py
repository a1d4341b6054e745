"""Open-model architectures: the shapes the memory and time estimators need."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from gpux_estimator import _fields as f
from gpux_estimator._catalog import Catalog
from gpux_estimator.errors import CatalogDataError, InvalidInputError

# Custom models derived from a bare parameter count (docs/ESTIMATES.md, "Custom models").
CUSTOM_MIN_PARAMS_B = 0.05
CUSTOM_MAX_PARAMS_B = 2000.0
CUSTOM_HEAD_DIM = 128
CUSTOM_HIDDEN_PER_LAYER = 128  # Llama 3.1 8B: 4096 / 32 layers
CUSTOM_GQA_GROUP = 4  # query heads per KV head
CUSTOM_MLP_RATIO = 3.5  # intermediate / hidden, Llama 3.1 8B: 14336 / 4096
CUSTOM_VOCAB = 32_000
CUSTOM_WIDTH_STEP = 256


@dataclass(frozen=True, slots=True)
class ModelArch:
    """Decoder-only transformer shape of one open model (or one derived from a size)."""

    id: str
    name: str
    params_b: float
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int
    head_dim: int
    tied_embeddings: bool = False
    experts: int = 1
    experts_per_token: int = 1
    source: str = ""
    custom: bool = False

    def __post_init__(self) -> None:
        if self.heads % self.kv_heads:
            raise CatalogDataError(f"model {self.id!r}: heads must be a multiple of kv_heads")
        if not 1 <= self.experts_per_token <= self.experts:
            raise CatalogDataError(f"model {self.id!r}: need 1 <= experts_per_token <= experts")

    @property
    def q_dim(self) -> int:
        """Width of the query (and attention output) projection."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of each of the key and value projections (grouped-query attention)."""
        return self.kv_heads * self.head_dim

    @property
    def attention_params_per_layer(self) -> int:
        """q, k, v and o projection weights of one layer (biases ignored: < 0.1 %)."""
        return 2 * self.hidden * self.q_dim + 2 * self.hidden * self.kv_dim

    @property
    def mlp_params_per_expert(self) -> int:
        """Gated MLP (gate, up, down) of one expert in one layer."""
        return 3 * self.hidden * self.intermediate

    @property
    def block_linear_params(self) -> int:
        """Every linear weight inside the decoder blocks, all experts (what QLoRA quantises)."""
        router = self.hidden * self.experts if self.experts > 1 else 0
        per_layer = self.attention_params_per_layer + self.experts * self.mlp_params_per_expert
        return self.layers * (per_layer + router)

    @property
    def active_block_linear_params(self) -> int:
        """Block linear weights one token passes through (top-k experts only for MoE)."""
        per_layer = (
            self.attention_params_per_layer + self.experts_per_token * self.mlp_params_per_expert
        )
        return self.layers * per_layer

    @property
    def embedding_params(self) -> int:
        """Input embedding plus, when untied, the output head (both kept in 16 bit)."""
        copies = 1 if self.tied_embeddings else 2
        return copies * self.vocab * self.hidden

    @property
    def norm_params(self) -> int:
        """RMSNorm weights: two per layer plus the final one."""
        return (2 * self.layers + 1) * self.hidden

    @property
    def total_params(self) -> int:
        """Parameter count computed from the shape."""
        return self.block_linear_params + self.embedding_params + self.norm_params

    @property
    def per_layer_params(self) -> int:
        """Parameters of one decoder block (what FSDP gathers at a time)."""
        return self.block_linear_params // self.layers


@dataclass(frozen=True, slots=True)
class ModelCatalog(Catalog[ModelArch]):
    """A versioned, ordered set of model architectures with unique ids."""

    kind: ClassVar[str] = "model"
    version: int
    models: tuple[ModelArch, ...]

    def _items(self) -> tuple[ModelArch, ...]:
        return self.models


def model_from_row(model_id: str, row: Mapping[str, Any]) -> ModelArch:
    """Build one ModelArch from its data-table row, validating every field."""
    where = f"model {model_id!r}"
    hidden = f.integer(row, "hidden_size", where)
    heads = f.integer(row, "attention_heads", where)
    return ModelArch(
        id=f.slug(model_id, where),
        name=f.text(row, "name", where),
        params_b=f.number(row, "params_b", where),
        layers=f.integer(row, "layers", where),
        hidden=hidden,
        intermediate=f.integer(row, "intermediate_size", where),
        heads=heads,
        kv_heads=f.integer(row, "kv_heads", where),
        vocab=f.integer(row, "vocab_size", where),
        head_dim=f.optional_integer(row, "head_dim", where, hidden // heads),
        tied_embeddings=f.flag(row, "tied_embeddings", where, False),
        experts=f.optional_integer(row, "experts", where, 1),
        experts_per_token=f.optional_integer(row, "experts_per_token", where, 1),
        source=f.text(row, "source", where),
    )


def model_catalog_from_mapping(data: Mapping[str, Any]) -> ModelCatalog:
    """Build the catalog from the parsed models.toml document (``version`` + ``[models.<id>]``)."""
    version, rows = f.versioned_rows(data, "models", "models.toml", items="models")
    return ModelCatalog(version=version, models=tuple(model_from_row(i, row) for i, row in rows))


def _custom_shape(hidden: int, layers: int) -> ModelArch:
    """A Llama-style shape of the given width and depth (see custom_model)."""
    # hidden is a multiple of 256, so heads is even and one of these groupings divides it.
    heads = max(1, hidden // CUSTOM_HEAD_DIM)
    group = CUSTOM_GQA_GROUP if heads % CUSTOM_GQA_GROUP == 0 else min(heads, 2)
    kv_heads = heads // group
    width = CUSTOM_WIDTH_STEP
    intermediate = max(width, round(hidden * CUSTOM_MLP_RATIO / width) * width)
    return ModelArch(
        id="custom", name="custom", params_b=0.0, layers=layers, hidden=hidden,
        intermediate=intermediate, heads=heads, kv_heads=kv_heads, vocab=CUSTOM_VOCAB,
        head_dim=CUSTOM_HEAD_DIM, custom=True,
    )  # fmt: skip


def custom_model(params_b: float) -> ModelArch:
    """Plausible Llama-style architecture for a bare parameter count in billions.

    Width comes from the Llama depth/width ratio (hidden = 128 x layers, per-layer weights
    ~13 x hidden^2), rounded to a multiple of 256; depth is then chosen so the computed
    count is as close to ``params_b`` as whole layers allow.
    """
    if isinstance(params_b, bool) or not isinstance(params_b, int | float):
        raise InvalidInputError("params_b must be a number")
    if not (math.isfinite(params_b) and CUSTOM_MIN_PARAMS_B <= params_b <= CUSTOM_MAX_PARAMS_B):
        raise InvalidInputError(
            f"params_b must be between {CUSTOM_MIN_PARAMS_B} and {CUSTOM_MAX_PARAMS_B}, "
            f"got {params_b}"
        )
    target = params_b * 1e9
    # Per-layer ~13 h^2 with layers = h / 128 gives target ~ 13 h^3 / 128.
    rough = (target * CUSTOM_HIDDEN_PER_LAYER / 13) ** (1 / 3)
    hidden = max(CUSTOM_WIDTH_STEP, round(rough / CUSTOM_WIDTH_STEP) * CUSTOM_WIDTH_STEP)
    one_layer = _custom_shape(hidden, 1)
    fixed = one_layer.embedding_params + one_layer.hidden
    per_layer = one_layer.per_layer_params + 2 * hidden
    layers = max(1, round((target - fixed) / per_layer))
    shape = _custom_shape(hidden, layers)
    label = f"{params_b:g}"
    return ModelArch(
        id=f"custom-{label}b", name=f"Custom {label}B", params_b=float(params_b),
        layers=shape.layers, hidden=shape.hidden, intermediate=shape.intermediate,
        heads=shape.heads, kv_heads=shape.kv_heads, vocab=shape.vocab, head_dim=shape.head_dim,
        source="derived from parameter count (docs/ESTIMATES.md, Custom models)", custom=True,
    )  # fmt: skip
