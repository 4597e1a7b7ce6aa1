"""``np.einsum`` / ``torch.einsum`` with a constant equation, lowered to views and one matmul.

The contractions attention code writes ("bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bij,bjk->bik",
"ij,jk->ik", "bi,bi->b", "i,i->") are batched matrix products: every label is a batch label (in both
operands and the output), a row label (the first operand and the output), a column label (the second
and the output) or a contracted label (both operands, not the output). So the call becomes: each
operand permuted (a view) to (batch..., row, k) and (batch..., k, column), a size-1 axis (a view) where
there is no row, column or contracted label, ``operator.matmul``, the added axes indexed away and the
result permuted to the output's order. Nothing new computes: the admitted matmul kernels do, within
their spec's tolerance, and the views are the compiler's own (checked as NumPy checks them: an operand
whose rank is not its label count is ValueError from the permutation, a contracted size mismatch
matmul's ValueError). Batch dims of size 1 broadcast, as matmul's do.

What does not fit that shape is refused at compile time with the reason: more than two operands, a
label repeated in one operand (a trace or diagonal), a label in one operand only and not in the output
(a sum over it), several row, column or contracted labels (which would need a reshape of a view),
``...``. (A label of the output found in no operand is NumPy's ValueError, refused too.)
"""

from __future__ import annotations

from opgen.compiler import ir

EINSUM_OPS = ("numpy.einsum", "torch.einsum")


def parse(equation: str) -> tuple[list[str], str] | str:
    """(operand labels, output labels) of an explicit or implicit equation, or what is wrong."""
    eq = equation.replace(" ", "")
    if "." in eq:
        return "an ellipsis (...) in the equation"
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if not all(s.isalpha() for s in ins) or (arrow and out and not out.isalpha()):
        return f"the equation {equation!r} (labels must be letters)"
    if not arrow:  # NumPy's implicit output: the labels seen once, in alphabetical order
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    return ins, out


def lower(line: int, equation: str, operands: list[ir.Expr], source: str) -> ir.Expr | tuple[str, str]:
    """The IR computing the einsum, or (what is not supported, what to write instead)."""
    parsed = parse(equation)
    if isinstance(parsed, str):
        return f"{parsed} is not supported by opgen compile's einsum", "write the labels out"
    ins, out = parsed
    if len(ins) != 2 or len(operands) != 2:
        return (f"einsum of {len(operands)} operands ({equation!r}) is not supported by opgen compile; it lowers "
                "einsum of two operands to one matmul", "split it into einsums of two operands")
    a, b = ins
    for labels in (a, b, out):
        if len(set(labels)) != len(labels):
            return (f"a label repeated within one term of {equation!r} (a diagonal or trace) is not supported by "
                    "opgen compile", "take the diagonal explicitly first")
    if set(out) - set(a) - set(b):
        return (f"the output label(s) {''.join(sorted(set(out) - set(a) - set(b)))} of {equation!r} appear in no "
                "operand (NumPy raises ValueError)", "name only labels of the operands")
    batch = [c for c in out if c in a and c in b]
    rows = [c for c in a if c in out and c not in b]
    cols = [c for c in b if c in out and c not in a]
    contracted = [c for c in a if c in b and c not in out]
    alone = [c for c in a + b if c not in out and not (c in a and c in b)]
    if alone:
        return (f"the label(s) {''.join(alone)} of {equation!r} are summed over one operand only; opgen compile "
                "lowers einsum to one matmul", "sum that operand first (np.sum(x, axis=...))")
    if len(rows) > 1 or len(cols) > 1 or len(contracted) > 1:
        return (f"{equation!r} has several row, column or contracted labels; opgen compile lowers einsum to one "
                "matmul of (batch..., rows, k) by (batch..., k, columns) views",
                "reshape the operands to one label each, or use a matmul")
    # operand views: (batch..., row, k) and (batch..., k, col); a missing row/col/k is a new size-1 axis
    left = _arranged(line, operands[0], a, batch + rows + contracted, (rows, contracted))
    right = _arranged(line, operands[1], b, batch + contracted + cols, (contracted, cols))
    product = ir.Op(line, "operator.matmul", [left, right], {}, source)
    # (batch..., row or 1, col or 1): drop the added axes, then put the labels in the output's order
    drop = [ir.IndexPart("ellipsis")]
    drop += [ir.IndexPart("slice") if rows else ir.IndexPart("at", index=ir.Const(line, 0))]
    drop += [ir.IndexPart("slice") if cols else ir.IndexPart("at", index=ir.Const(line, 0))]
    result: ir.Expr = product if rows and cols else ir.Subscript(line, product, drop)
    have = batch + rows + cols
    if have != list(out):
        result = _permuted(line, result, [have.index(c) for c in out])
    return result


def _arranged(line: int, x: ir.Expr, labels: str, order: list[str], inner: tuple[list[str], list[str]]) -> ir.Expr:
    """``x`` (labelled ``labels``) as a view in ``order``, then a size-1 axis for each empty group of ``inner``
    (the last two places a matmul operand has). The permutation is always applied, even the identity: it
    is what checks that x has as many dims as labels (ValueError, as NumPy's einsum)."""
    view = _permuted(line, x, [labels.index(c) for c in order])
    first, second = inner
    if first and second:
        return view
    parts = [ir.IndexPart("ellipsis")]
    if not first and not second:
        parts += [ir.IndexPart("newaxis"), ir.IndexPart("newaxis")]
    elif not first:  # (..., k) -> (..., 1, k)
        parts = [ir.IndexPart("ellipsis"), ir.IndexPart("newaxis"), ir.IndexPart("slice")]
    else:  # (..., k) -> (..., k, 1)
        parts += [ir.IndexPart("newaxis")]
    return ir.Subscript(line, view, parts)


def _permuted(line: int, x: ir.Expr, axes: list[int]) -> ir.Expr:
    return ir.Builtin(line, "axes_view", [ir.Const(line, "permute"), x,
                                          ir.ListLit(line, [ir.Const(line, i) for i in axes])])
