"""pytest plugin: run onnx's own shape-inference tests against ``infer.onnx_compat``.

Loaded with ``-p tests.compat.onnx_tests_plugin``; it replaces ``onnx.shape_inference
.infer_shapes`` and ``infer_shapes_path`` before the tests are collected. The tests themselves
live in the onnx repository and are not part of this project (see run_onnx_shape_tests.py).

``ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS=0`` runs them with ``initializers_as_constants=False``
(an initializer that is also a graph input is a default the caller may override, Clause 7.2);
``1`` reads it as a constant, as onnx does; unset, the drop-in's default (a constant) applies.
"""

from __future__ import annotations

import functools
import os

import onnx.shape_inference

from infer import onnx_compat

_setting = os.environ.get("ONNX_COMPAT_INITIALIZERS_AS_CONSTANTS", "")
_kwargs = {} if _setting == "" else {"initializers_as_constants": _setting != "0"}
onnx.shape_inference.infer_shapes = functools.partial(onnx_compat.infer_shapes, **_kwargs)
onnx.shape_inference.infer_shapes_path = functools.partial(onnx_compat.infer_shapes_path, **_kwargs)
