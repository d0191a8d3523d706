"""Small statistics helpers used by the nightly reporting job."""


def mean(values):
    """Arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    """Middle value of a list of numbers; for an even count, the mean of the two middle values."""
    values.sort()
    middle = len(values) // 2
    return values[middle]
