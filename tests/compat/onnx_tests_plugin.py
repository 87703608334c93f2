"""pytest plugin: run onnx's own shape-inference tests against ``infer.onnx_compat``.

Loaded with ``-p tests.compat.onnx_tests_plugin``; it replaces ``onnx.shape_inference
.infer_shapes`` and ``infer_shapes_path`` before the tests are collected. The tests themselves
live in the onnx repository and are not part of this project (see run_onnx_shape_tests.py).

``ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS=1`` runs them with ``initializers_as_constants=True``
(an initializer that is also a graph input is read as a constant, as onnx reads it).
"""

from __future__ import annotations

import functools
import os

import onnx.shape_inference

from infer import onnx_compat

_constants = os.environ.get("ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS", "") not in ("", "0")
onnx.shape_inference.infer_shapes = functools.partial(onnx_compat.infer_shapes, initializers_as_constants=_constants)
onnx.shape_inference.infer_shapes_path = functools.partial(
    onnx_compat.infer_shapes_path, initializers_as_constants=_constants
)
