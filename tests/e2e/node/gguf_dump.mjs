// Parses a GGUF file with an independent reader (@huggingface/gguf) and prints what it found
// as JSON, so the tests can check that snapstream's files follow the specification.
import { gguf } from "@huggingface/gguf";

const file = process.argv[2];
const { metadata, tensorInfos, tensorDataOffset } = await gguf(file, { allowLocalFile: true });
const plain = (value) => (typeof value === "bigint" ? Number(value) : value);
const out = {
  data_offset: Number(tensorDataOffset),
  metadata: Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, Array.isArray(value) ? value.map(plain) : plain(value)])),
  tensors: tensorInfos.map((t) => ({ name: t.name, dims: t.shape.map(Number), type: t.dtype, offset: Number(t.offset) })),
};
process.stdout.write(JSON.stringify(out));
