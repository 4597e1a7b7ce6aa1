"""Loops as people write them: range, while, break, continue, early return."""


def first_index_above(xs: list[float], threshold: float) -> int:
    """Where a score first passes a threshold (an early return from a range loop), -1 if never."""
    for i in range(len(xs)):
        if xs[i] > threshold:
            return i
    return -1


def collatz_steps(n: int, limit: int) -> int:
    """Steps of the Collatz map to reach 1 (a while loop with an if/else body and a step limit)."""
    if n < 1:
        return -1
    steps = 0
    while n != 1 and steps < limit:
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a: int, b: int) -> int:
    """Euclid's algorithm: a while loop with a tuple swap."""
    while b != 0:
        a, b = b, a % b
    return abs(a)


def count_positive_prefix(xs: list[int]) -> int:
    """Count the positive items before the first negative one, skipping zeros (break and continue)."""
    n = 0
    for x in xs:
        if x < 0:
            break
        if x == 0:
            continue
        n += 1
    return n


def is_prime(n: int) -> bool:
    """Trial division with a while loop and two early returns."""
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def countdown_every(start: int, step: int) -> list[int]:
    """A range with a negative step (and Python's ValueError for a zero one)."""
    return [i for i in range(start, 0, -step)]


def find_pair_sum(xs: list[int], target: int) -> int:
    """The first i*len+j whose pair sums to the target: nested loops left by a return from inside."""
    n = len(xs)
    for i in range(n):
        for j in range(i + 1, n):
            if xs[i] + xs[j] == target:
                return i * n + j
    return -1


def while_true_search(xs: list[int], v: int) -> int:
    """`while True` left only by return: the index of v, or -1."""
    i = 0
    while True:
        if i >= len(xs):
            return -1
        if xs[i] == v:
            return i
        i += 1
