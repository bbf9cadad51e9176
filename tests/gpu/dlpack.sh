# tests/gpu/dlpack.sh (sourced): tilec.h includes <dlpack/dlpack.h> (Debian's libdlpack-dev). Where
# the machine lacks it, use a copy a Python package ships (CuPy, PyTorch's ATen) through an include
# folder of our own. Sets the positional parameters to the make arguments that use it (none needed:
# empty).
EXTRA_CFLAGS=""
if [ ! -f /usr/include/dlpack/dlpack.h ]; then
  inc=$(mktemp -d /tmp/tilec-dlpack-XXXXXX)
  hdr=$(find / -xdev \( -path '*/dlpack/dlpack.h' -o -path '*/ATen/dlpack.h' \) 2>/dev/null | head -n 1)
  if [ -n "$hdr" ]; then
    mkdir -p "$inc/dlpack" && cp "$hdr" "$inc/dlpack/dlpack.h" && EXTRA_CFLAGS="-I$inc"
  fi
fi
if [ -n "$EXTRA_CFLAGS" ]; then set -- CFLAGS="$EXTRA_CFLAGS"; else set --; fi
