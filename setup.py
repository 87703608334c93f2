"""The extension modules of the opt-in compiled build (none by default): the rest of the
package's description is pyproject.toml's. See build_backend/onnx_infer_build.py."""

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent / "build_backend"))
from onnx_infer_build import ext_modules, setup_options  # (found through the path above)

setup(ext_modules=ext_modules(), options=setup_options())
