# TileLang's performance-regression suite shape (examples/**/regression_*.py), unmodified.
import tilelang.testing
import example_axpy


def regression_example_axpy():
    tilelang.testing.process_func(example_axpy.run_regression_perf)


def regression_example_axpy_small():
    tilelang.testing.process_func(example_axpy.run_regression_perf, n=1000, block=64)


if __name__ == "__main__":
    tilelang.testing.regression()
