"""Kernel names: demangling, function names, the short names of the CLI tables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mdm.cli.main import app
from mdm.traces.names import demangle, display_name, function_name

MANGLED = (
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_51_GLOBAL__N__b1108092_12_"
    "PowKernel_cu_10c8ac97_2369629pow_tensor_scalar_kernel_implIffEEvRNS_18TensorIterat"
    "orBaseET0_EUlfE0_St5arrayIPcLm2EEEEviS6_T1_"
)


def test_function_name() -> None:
    assert function_name(MANGLED) == "vectorized_elementwise_kernel"
    assert function_name("void at::native::vectorized_elementwise_kernel<4, F>(int, F)") == (
        "vectorized_elementwise_kernel"
    )
    assert function_name("vectorized_elementwise_kernel") == "vectorized_elementwise_kernel"
    assert function_name("jacobi5pt_kernel(float const*, float*, int, int)") == "jacobi5pt_kernel"
    assert function_name("void ns::(anonymous namespace)::k<(int)3>(float*) const") == "k"


@settings(max_examples=60, deadline=None)
@given(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(
        lambda s: not s.startswith("_Z")  # a mangled name is demangled: not an identity
    ),
    st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), max_size=3),
    st.sampled_from(["", "<4, float>", "<(int)3, ns::T<2> >"]),
    st.sampled_from(["()", "(float const*, int)", "(std::array<char*, 2ul>)"]),
)
def test_function_name_strips_scopes_templates_params(
    fn: str, scopes: list[str], targs: str, params: str
) -> None:
    full = "void " + "".join(f"{s}::" for s in scopes) + fn + targs + params
    assert function_name(full) == fn
    assert function_name(fn) == fn
    assert display_name(full, 80) == fn + ("<…>" if targs else "")


def test_demangle() -> None:
    assert demangle("_Z6jacobiPfi") == "jacobi(float*, int)"
    assert demangle(MANGLED).startswith("void at::native::vectorized_elementwise_kernel<4, ")
    assert demangle("_Znot a name") == "_Znot a name"  # kept when it does not demangle
    assert demangle(" stride ") == "stride"


def test_display_name_marks_templates_and_cuts() -> None:
    assert display_name(MANGLED) == "vectorized_elementwise_kernel<…>"
    assert display_name(MANGLED, 12) == "vectorized_…"
    assert display_name("_Z6jacobiPfi") == "jacobi"
    assert display_name("void ns::k<(int)3>(float*) const") == "k<…>"
    assert display_name("stride") == "stride"


@given(st.one_of(st.text(max_size=80), st.text(max_size=80).map("_Z".__add__)), st.integers(2, 60))
def test_display_name_fits(name: str, n: int) -> None:
    assert len(display_name(name, n)) <= n


def test_predict_table_shows_the_demangled_name(pytorch_pow_dir) -> None:  # noqa: ANN001
    r = CliRunner().invoke(
        app, ["predict", str(pytorch_pow_dir), "--gpu", "mdm_pascal", "--model", "mdm"]
    )
    assert r.exit_code == 0, r.output
    assert "vectorized_elementwise_kernel<…>" in r.output and "_ZN2at" not in r.output
