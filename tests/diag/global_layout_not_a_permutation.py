import tilelang.language as T
@T.prim_func
def k(dQ: T.Tensor((4, 512, 64), "float32")):
    with T.Kernel(1, threads=32) as bx:
        # 8 rows share each offset: the layout spans fewer elements than dQ holds
        T.annotate_layout({dQ: T.Layout(dQ.shape, lambda b, l, d: [b, l // 8, d])})
        dQ[0, 0, 0] = 1.0
