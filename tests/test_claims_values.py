"""Value normalisation: what a written value can stand for, and how it compares."""

from __future__ import annotations

import pytest

from ci_tools.claims.text.values import (
    Image, Number, Word, dtype_matches, fragment_matches, image_matches, number_matches, parse_bool, parse_dtype,
    parse_fragment, parse_image, parse_number, parse_relative,
)


@pytest.mark.parametrize("text, values, unit", [
    ("8192", {8192}, ""), ("32K", {32000, 32768}, ""), ("16k", {16000, 16384}, ""),
    ("1M", {1_000_000, 1_048_576}, ""), ("0.85", {0.85}, ""), ("3,920", {3920}, ""),
    ("8192-token", {8192}, "token"), ("3600-second", {3600}, "second"), ("zero", {0}, ""),
    ("two", {2}, ""), ("three-token", {3}, "token"), ("零", {0}, ""),
])
def test_numbers(text: str, values: set[float], unit: str) -> None:
    n = parse_number(text)
    assert n is not None and n.candidates == frozenset(float(v) for v in values) and n.unit == unit


@pytest.mark.parametrize("text", ["8k1k", "v0.5.14", "gfx942", "TP8", "twice", "1k-token-ish", "abc"])
def test_not_numbers(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize("words, factor, consumed", [
    (["2x", "concurrency"], 2.0, 2), (["twice", "the", "concurrency"], 2.0, 3), (["2xCONC"], 2.0, 1),
    (["the", "concurrency"], 1.0, 2), (["half", "the", "concurrency", "budget"], 0.5, 3),
    (["2", "*", "CONC"], 2.0, 3),
])
def test_relative_to_concurrency(words: list[str], factor: float, consumed: int) -> None:
    rel = parse_relative(words)
    assert rel is not None and rel.factor == factor and len(rel.text.split()) == consumed


def test_not_relative() -> None:
    assert parse_relative(["2x", "throughput"]) is None
    assert parse_relative(["7.52x"]) is None


def test_booleans_and_dtypes() -> None:
    assert [parse_bool(w).on for w in ("on", "off", "enabled", "disabled", "true", "false")] == [  # type: ignore[union-attr]
        True, False, True, False, True, False]
    assert parse_bool("maybe") is None
    fp8 = parse_dtype("FP8")
    assert fp8 is not None and fp8.norm == "fp8"
    assert dtype_matches(fp8, "fp8_e4m3") is True
    assert dtype_matches(fp8, "bf16") is False
    assert dtype_matches(fp8, "auto") is None  # the program's default: cannot compare
    assert parse_dtype("fast") is None


def test_number_comparison() -> None:
    k32 = parse_number("32K")
    assert k32 is not None
    assert number_matches(k32, "32768") is True
    assert number_matches(k32, "32000") is True
    assert number_matches(k32, "8192") is False
    assert number_matches(k32, "$INTERVAL") is None
    assert number_matches(Number("0", frozenset({0.0})), "0.0") is True


def test_images() -> None:
    img = parse_image("rocm/atom-dev:nightly_202609071454")
    assert img == Image("rocm/atom-dev:nightly_202609071454", "rocm/atom-dev:nightly_202609071454")
    assert image_matches(img, "docker.io/rocm/atom-dev:nightly_202609071454")
    assert image_matches(img, "rocm/atom-dev:nightly_202609071454@sha256:" + "f" * 64)
    assert not image_matches(img, "rocm/atom-dev:nightly_202608201032")
    assert parse_image("rocm7.2.3_..._atom20260511") is None
    assert parse_image("amd/DeepSeek-R1-0528-MXFP4") is None  # a model, not an image
    assert Word("least_tokens", "least_tokens").describe() == "least_tokens"


def test_a_channel_tag_is_every_build_pinned_on_it() -> None:
    # bb00055812e0: "... for MI355X on vllm/vllm-openai-rocm:nightly", the config pins one nightly build
    nightly = parse_image("vllm/vllm-openai-rocm:nightly")
    assert nightly is not None
    assert image_matches(nightly, "vllm/vllm-openai-rocm:nightly-bf610c2f56764e1b30bc6065f4ceace3d6e59036")
    assert image_matches(nightly, "vllm/vllm-openai-rocm:nightly_20260601")
    assert not image_matches(nightly, "vllm/vllm-openai-rocm:v0.9.0")
    assert not image_matches(nightly, "vllm/vllm-openai-rocm:nightlyish")
    # a pinned build is not the channel, nor another build of it
    pinned = parse_image("vllm/vllm-openai-rocm:nightly-bf610c2f")
    assert pinned is not None and not image_matches(pinned, "vllm/vllm-openai-rocm:nightly-a6682d1d")


def test_a_tag_ending_in_a_commit_id_written_with_its_first_hex_digits() -> None:
    # vllm/vllm-openai-rocm:nightly-09663abde0f5... of the real tree, as prose writes it
    full = "vllm/vllm-openai-rocm:nightly-09663abde0f50944a8d5ea30120666024b503faa"
    for short in ("vllm/vllm-openai-rocm:nightly-09663ab", "vllm/vllm-openai-rocm:nightly-09663abde0f5"):
        img = parse_image(short)
        assert img is not None and image_matches(img, full), short
    for other in ("vllm/vllm-openai-rocm:nightly-09663ac", "vllm/vllm-openai-rocm:dev-09663ab",
                  "vllm/vllm-openai-rocm:nightly-0966"):
        img = parse_image(other)
        assert img is not None and not image_matches(img, full), other
    # a date is no commit id: its first digits are another date
    dated = parse_image("lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-2026072")
    assert dated is not None and not image_matches(dated, "lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-20260726")


def test_a_release_version_with_or_without_its_v() -> None:
    # e43ae2f1b325: "to v1.3.0rc14", the config runs nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14
    assert fragment_matches(parse_fragment("v1.3.0rc14"), "1.3.0rc14")
    assert fragment_matches(parse_fragment("1.3.0rc14"), "v1.3.0rc14")
    assert not fragment_matches(parse_fragment("v1.3.0rc14"), "1.3.0rc11")
    assert not fragment_matches(parse_fragment("v1.3.0rc14"), "v1.3.0rc14.post1")
