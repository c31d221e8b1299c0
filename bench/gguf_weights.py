"""A fine-tuned Llama-family model written back into the GGUF file it was loaded from, for llama.cpp's
server: the base file's metadata and tokenizer (its chat template with them), the tuned weights in F16
(norms in F32, as llama.cpp writes them). bench/distill.py's one use of the `gguf` package.

transformers un-permutes the query and key weights when it loads a Llama GGUF (llama.cpp orders each head's
rotary halves apart); they are permuted back here as llama.cpp's convert_hf_to_gguf.py does.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from transformers import PreTrainedModel

F16 = 1  # llama_ftype MOSTLY_F16, for general.file_type


def write_tuned_gguf(model: PreTrainedModel, base_file: Path, out: Path) -> Path:
    config = model.config
    weights = {name: tensor.float().numpy() for name, tensor in model.state_dict().items()}
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    by_gguf_name = {names.get_name(name, try_suffixes=(".weight", ".bias")): name for name in weights}
    reader = gguf.GGUFReader(base_file)
    writer = gguf.GGUFWriter(out, arch=reader.fields[gguf.Keys.General.ARCHITECTURE].contents())
    _copy_metadata(reader, writer)
    for tensor in reader.tensors:
        array = weights[by_gguf_name[tensor.name]]
        if tensor.name.endswith("attn_q.weight"):
            array = _permute(array, config.num_attention_heads)
        elif tensor.name.endswith("attn_k.weight"):
            array = _permute(array, config.num_key_value_heads)
        writer.add_tensor(tensor.name, array.astype(np.float16 if array.ndim > 1 else np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def _copy_metadata(reader: gguf.GGUFReader, writer: gguf.GGUFWriter) -> None:
    """Every key of the base file but those the writer sets itself; the file type now F16."""
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value_type = field.types[0]
        sub_type = field.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        value = F16 if field.name == gguf.Keys.General.FILE_TYPE else field.contents()
        writer.add_key_value(field.name, value, value_type, sub_type=sub_type)


def _permute(weights: np.ndarray, heads: int) -> np.ndarray:
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )
