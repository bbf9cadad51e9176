import tilelang
import tilelang.language as T


def helper(x):
    return x * 2


if __name__ == "__main__":
    print(helper(3))
