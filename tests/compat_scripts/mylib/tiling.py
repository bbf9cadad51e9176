OFFSET = 0.5


def align_up(x, a):
    return (x + a - 1) // a * a


def scaled(x, factor):
    # called inside kernels: tilec receives this function's source and OFFSET with it
    return x * factor + OFFSET


class TileConfig:
    """Tile sizes computed in Python (the kernels read the ints, not the object)."""

    def __init__(self, block, threads):
        self.block, self.threads = block, threads

    @classmethod
    def for_width(cls, n):
        return cls(64 if n >= 64 else 32, 128)
