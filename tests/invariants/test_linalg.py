"""The exact null-space solver: modular elimination + rational reconstruction vs. Fractions."""

import random
from fractions import Fraction

from quokka.invariants.linalg import (
    PRIME,
    ModEchelon,
    Relation,
    lift,
    nullspace,
    nullspace_exact,
    primitive,
    rational_reconstruct,
)


def _planted(rng: random.Random, nrows: int, relations: list[dict[int, int]], ncols: int) -> list[list[int]]:
    """Random rows satisfying `relations`, each of the form col_free = sum(c * col) (free col last)."""
    rows = []
    for _ in range(nrows):
        row = [rng.randint(-50, 50) for _ in range(ncols)]
        for rel in relations:
            free = max(rel)
            row[free] = sum(c * row[i] for i, c in rel.items() if i != free)
        rows.append(row)
    return rows


def test_rational_reconstruction_recovers_small_fractions():
    for q in [Fraction(3, 7), Fraction(-22, 5), Fraction(0), Fraction(123456789, 1000003)]:
        image = q.numerator * pow(q.denominator, -1, PRIME) % PRIME
        assert rational_reconstruct(image, PRIME) == q


def test_rational_reconstruction_never_returns_a_fraction_out_of_bounds():
    rng = random.Random(5)
    found = 0
    for _ in range(200):
        image = rng.randrange(PRIME)
        q = rational_reconstruct(image, PRIME)
        if q is None:
            continue
        found += 1
        assert abs(q.numerator) ** 2 <= PRIME // 2 and q.denominator ** 2 <= PRIME // 2
        assert q.numerator * pow(q.denominator, -1, PRIME) % PRIME == image  # and it is that image's
    assert 100 <= found < 200  # about 6/pi**2 of all images have a small preimage (130 for this seed)


def test_relations_with_huge_coefficients_are_dropped_not_garbled():
    big = (1 << 80) + 1
    rows = [[k, big * k, 1] for k in range(1, 12)]
    assert nullspace(rows, 3) == []  # documented limit: coefficients beyond ~2**63
    (rel,) = nullspace_exact(rows, 3)
    assert dict(rel.coeffs) == {0: -big, 1: 1}


def test_primitive_scales_to_coprime_integers_with_positive_free_entry():
    rel = primitive(2, {0: Fraction(-1, 2), 1: Fraction(3, 4), 2: Fraction(-1, 4)})
    assert rel == Relation(2, ((0, -2), (1, 3), (2, -1))) or rel == Relation(2, ((0, 2), (1, -3), (2, 1)))
    assert dict(rel.coeffs)[2] == 1


def test_nullspace_finds_a_planted_relation_exactly():
    # column 3 = 2*col0 - 3*col1 + 7*col2
    rows = _planted(random.Random(1), 30, [{0: 2, 1: -3, 2: 7, 3: 1}], 4)
    (rel,) = nullspace(rows, 4)
    assert rel.lead == 3
    assert dict(rel.coeffs) == {0: -2, 1: 3, 2: -7, 3: 1}
    assert all(rel.dot(r) == 0 for r in rows)


def test_nullspace_agrees_with_the_fraction_reference():
    rng = random.Random(7)
    for trial in range(20):
        ncols = rng.randint(3, 9)
        rels = []
        for free in rng.sample(range(1, ncols), rng.randint(0, ncols - 2)):
            rels.append({i: rng.randint(-5, 5) for i in range(free)} | {free: 1})
        rows = _planted(rng, ncols + 6, sorted(rels, key=max), ncols)
        assert nullspace(rows, ncols) == nullspace_exact(rows, ncols), f"trial {trial}"


def test_nullspace_of_full_rank_data_is_empty():
    rng = random.Random(3)
    rows = [[rng.randint(-1000, 1000) for _ in range(6)] for _ in range(12)]
    assert nullspace(rows, 6) == []
    assert nullspace_exact(rows, 6) == []


def test_rows_beyond_the_first_batch_refute_spurious_relations():
    # The first rows all have col1 == 2*col0; a late row breaks that.
    rows = [[k, 2 * k, 1] for k in range(1, 20)] + [[5, 11, 1]]
    assert nullspace(rows, 3, first=4) == []
    rows_ok = [[k, 2 * k, 1] for k in range(1, 20)]
    (rel,) = nullspace(rows_ok, 3, first=4)
    assert dict(rel.coeffs) == {0: -2, 1: 1}


def test_rational_coefficients_and_large_values():
    # 3*c2 == c0*c0/... : use c2 = (c0 + 2*c1) / 3 with big values, scaled to integers
    rng = random.Random(11)
    rows = []
    for _ in range(15):
        a, b = rng.randint(-(10**12), 10**12), rng.randint(-(10**12), 10**12)
        rows.append([3 * a, 3 * b, a + 2 * b])  # c2 = c0/3 + 2*c1/3
    (rel,) = nullspace(rows, 3)
    assert dict(rel.coeffs) == {0: -1, 1: -2, 2: 3}


def test_mod_echelon_rank_and_kernel():
    e = ModEchelon(3)
    assert e.add([1, 2, 3])
    assert not e.add([2, 4, 6])
    assert e.add([0, 1, 1])
    assert e.rank == 2
    ((free, vec),) = e.kernel()
    assert free == 2
    rel = lift(free, vec)
    assert rel is not None and all(rel.dot(r) == 0 for r in ([1, 2, 3], [0, 1, 1]))
