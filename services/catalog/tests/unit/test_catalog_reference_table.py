"""The product page's GPU table (shared/reference) must equal the fit rule's output, row by row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpux_catalog.adapters.files import load_gpu_catalog
from gpux_estimator import fit_for_gpu
from gpux_estimator.gpus import GpuCatalog

pytestmark = pytest.mark.unit

MEMORY = re.compile(r"^(\d+(?:[.,]\d+)?)\s*GB$")
BANDWIDTH = re.compile(r"^([\d.]+)\s*GB/s$")
BILLIONS = re.compile(r"(\d+)\s*Mrd\.")


def repo_root() -> Path:
    """The directory that contains ``services/``, walking up from this file."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "services").is_dir():
            return parent
    raise AssertionError("no directory containing services/ above this test file")


REFERENCE_DIR = repo_root().parent / "shared" / "reference"


@dataclass(frozen=True)
class PageRow:
    """One row of the page's GPU table."""

    source: str
    cell: str
    memory_gb: float
    bandwidth_gb_s: int
    qlora_b: int
    lora16_b: int


def parse_rows(text: str, source: str) -> list[PageRow]:
    """Every markdown table row whose memory cell reads like ``24 GB``."""
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) < 5:
            continue
        memory = MEMORY.match(cells[1])
        if memory is None:
            continue  # header or separator row
        bandwidth = BANDWIDTH.match(cells[2])
        qlora, lora = BILLIONS.search(cells[3]), BILLIONS.search(cells[4])
        if bandwidth is None or qlora is None or lora is None:
            raise AssertionError(f"{source}: cannot parse row {line!r}")
        rows.append(
            PageRow(
                source=source,
                cell=cells[0],
                memory_gb=float(memory.group(1).replace(",", ".")),
                # German thousands separator: "1.008 GB/s" is 1008 GB/s.
                bandwidth_gb_s=int(bandwidth.group(1).replace(".", "")),
                qlora_b=int(qlora.group(1)),
                lora16_b=int(lora.group(1)),
            )
        )
    return rows


def split_name(cell: str, catalog: GpuCatalog) -> tuple[str, str]:
    """'RTX 4090Ada Lovelace' -> ('RTX 4090', 'Ada Lovelace'): name and architecture glued."""
    for arch in sorted({gpu.architecture for gpu in catalog}, key=len, reverse=True):
        if cell.endswith(arch) and len(cell) > len(arch):
            return cell[: -len(arch)].strip(), arch
    raise AssertionError(f"GPU cell {cell!r} ends in no known architecture")


@pytest.fixture(scope="module")
def page_rows() -> list[PageRow]:
    """All GPU rows of every reference page; skipped only when shared/ is absent."""
    if not REFERENCE_DIR.is_dir():
        pytest.skip(f"reference folder {REFERENCE_DIR} is absent (no shared/ beside the repo)")
    rows: list[PageRow] = []
    for path in sorted(REFERENCE_DIR.glob("*.txt")):
        rows += parse_rows(path.read_text(encoding="utf-8"), path.name)
    assert rows, f"no GPU table rows found in {REFERENCE_DIR}/*.txt"
    return rows


def test_parser_reads_a_glued_row() -> None:
    line = "| RTX 4090Ada Lovelace | 24 GB | 1.008 GB/s | ≈ 15 Mrd. | ≈ 7 Mrd. | ab 0,33 $ |"
    (row,) = parse_rows(line, "inline")
    assert (row.memory_gb, row.bandwidth_gb_s, row.qlora_b, row.lora16_b) == (24, 1008, 15, 7)
    assert split_name(row.cell, load_gpu_catalog()) == ("RTX 4090", "Ada Lovelace")


def test_every_page_row_matches_the_fit_rule(page_rows: list[PageRow]) -> None:
    catalog = load_gpu_catalog()
    mismatches = []
    for row in page_rows:
        name, arch = split_name(row.cell, catalog)
        gpu = catalog.by_name(name)
        assert gpu is not None, f"{row.source}: GPU {name!r} is not in the catalog"
        assert gpu.architecture == arch, f"{name}: architecture {arch!r} vs {gpu.architecture!r}"
        fit = fit_for_gpu(gpu)
        if (fit.qlora_b, fit.lora16_b) != (row.qlora_b, row.lora16_b):
            mismatches.append((name, (row.qlora_b, row.lora16_b), (fit.qlora_b, fit.lora16_b)))
    assert not mismatches, f"page (QLoRA, LoRA) vs rule: {mismatches}"


def test_every_page_row_matches_the_gpu_data(page_rows: list[PageRow]) -> None:
    catalog = load_gpu_catalog()
    for row in page_rows:
        gpu = catalog.by_name(split_name(row.cell, catalog)[0])
        assert gpu is not None
        assert gpu.memory_gb == row.memory_gb, gpu.id
        assert gpu.bandwidth_gb_s == row.bandwidth_gb_s, gpu.id
