/** A model's inputs and outputs as the Open Inference Protocol describes them, from the ONNX graph or a manifest. */
import type { ModelManifest } from '../models/manifest';
import type { OnnxSignature, TensorSignature } from '../inference/onnx-signature';
import { datatypeOfOnnx } from './datatypes';
import type { ModelTensor, ModelView } from './infer-request';

/** `$metadata_tensor`: name, datatype and shape (-1 for a dynamic dimension). */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
}

function tensorOf(s: TensorSignature): ModelTensor {
  return {
    name: s.name,
    datatype: datatypeOfOnnx(s.elemType),
    dims: s.dims?.map((d) => (typeof d === 'number' && d >= 1 ? d : undefined)),
  };
}

/** The view of an ONNX graph signature (symbolic or unknown dims are dynamic). */
export function viewOfSignature(sig: OnnxSignature): ModelView {
  return { inputs: sig.inputs.map(tensorOf), outputs: sig.outputs.map(tensorOf) };
}

/** The view a manifest declares (one FP32 input and output; `-1` dims dynamic), for versions not loaded here. */
export function viewOfManifest(m: ModelManifest): ModelView {
  const t = (spec: ModelManifest['input']): ModelTensor => ({
    name: spec.name,
    datatype: 'FP32',
    dims: spec.shape.map((d) => (d >= 1 ? d : undefined)),
  });
  return { inputs: [t(m.input)], outputs: [t(m.output)] };
}

/** `$metadata_tensor` of a model tensor (`-1` for dynamic dims; `[]` when the rank is unknown). */
export function tensorMetadata(t: ModelTensor): TensorMetadata {
  return { name: t.name, datatype: t.datatype ?? 'UNSUPPORTED', shape: (t.dims ?? []).map((d) => d ?? -1) };
}
