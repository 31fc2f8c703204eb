"""Layer 6, export: ONNX (`onnx`) and graph drawing (`viz`)."""
