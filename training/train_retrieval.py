#!/usr/bin/env python3
"""Trains a small Llama-architecture model on retrieval task instances (`snapstream tasks`) so
that SnapStream can be judged on retrieval, and writes it as a llama2.c checkpoint the engine runs.

The architecture is exactly the engine's: RMSNorm, rotary embeddings on adjacent pairs, SwiGLU,
grouped-query attention, no biases, the classifier tied to the embedding. Training is
deterministic for a seed, resumes from its last checkpoint, and logs loss and held-out answer
accuracy (greedy, teacher-forced) to a CSV file.
"""
import argparse
import csv
import json
import math
import os
import random
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotary_tables(head_dim, length, base):
    # Pairs (2i, 2i+1) turn by position * base^(-2i/head_dim), as the engine's RoPE does.
    inverse = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(length).float(), inverse)
    return torch.cos(angles), torch.sin(angles)


def rotate(x, cos, sin):
    # x: [batch, heads, length, head_dim]
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = a.heads, a.kv_heads, a.dim // a.heads
        self.attention_norm = nn.Parameter(torch.ones(a.dim))
        self.wq = nn.Linear(a.dim, a.dim, bias=False)
        self.wk = nn.Linear(a.dim, self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(a.dim, self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(a.dim, a.dim, bias=False)
        self.ffn_norm = nn.Parameter(torch.ones(a.dim))
        self.w1 = nn.Linear(a.dim, a.hidden, bias=False)
        self.w2 = nn.Linear(a.hidden, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.hidden, bias=False)
        self.eps = a.norm_eps

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        h = rms_norm(x, self.attention_norm, self.eps)
        q = self.wq(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.matmul(q * self.head_dim ** -0.5, k.transpose(-1, -2)) + mask
        out = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.wo(out)
        h = rms_norm(x, self.ffn_norm, self.eps)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a
        self.embedding = nn.Embedding(a.vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = nn.Parameter(torch.ones(a.dim))
        cos, sin = rotary_tables(a.dim // a.heads, a.context, a.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.full((t, t), float("-inf")).triu(1)
        x = self.embedding(ids)
        for block in self.blocks:
            x = block(x, self.cos[:t], self.sin[:t], mask)
        return rms_norm(x, self.norm, self.a.norm_eps) @ self.embedding.weight.t()


def read_instances(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def answer_spans(instance):
    """Every answer's tokens [begin, end) in prompt_ids + answer_ids: several when the instance asks about every unit."""
    spans = instance.get("answer_spans")
    if spans:
        return [tuple(span) for span in spans]
    prompt = len(instance["prompt_ids"])
    return [(prompt, prompt + len(instance["answer_ids"]))]


def batch_of(instances, answer_weight, haystack_weight=1.0):
    """Inputs, targets, loss weights and the answers' targets, padded to the longest sequence of the batch (padding weighs 0)."""
    length = max(len(i["prompt_ids"]) + len(i["answer_ids"]) for i in instances)
    ids = torch.zeros(len(instances), length, dtype=torch.long)
    weights = torch.zeros(len(instances), length - 1)
    answer = torch.zeros(len(instances), length - 1, dtype=torch.bool)
    for row, instance in enumerate(instances):
        sequence = instance["prompt_ids"] + instance["answer_ids"]
        ids[row, : len(sequence)] = torch.tensor(sequence)
        weights[row, : len(sequence) - 1] = haystack_weight
        for begin, end in answer_spans(instance):
            # Target t is token t + 1: the answer's tokens are the targets of the positions before them.
            weights[row, begin - 1 : end - 1] = answer_weight
            answer[row, begin - 1 : end - 1] = True
    return ids[:, :-1], ids[:, 1:], weights, answer


@torch.no_grad()
def answer_accuracy(model, instances, batch_size):
    """Share of instances, per task, whose every answer token is the model's top choice (teacher forced)."""
    model.eval()
    right, seen = {}, {}
    for start in range(0, len(instances), batch_size):
        chunk = instances[start : start + batch_size]
        inputs, targets, _, answer = batch_of(chunk, 1.0)
        answered = ((model(inputs).argmax(-1) == targets) | ~answer).all(dim=1)
        for row, instance in enumerate(chunk):
            right[instance["task"]] = right.get(instance["task"], 0) + bool(answered[row])
            seen[instance["task"]] = seen.get(instance["task"], 0) + 1
    model.train()
    return {task: right[task] / seen[task] for task in seen}


def parse_stage(text):
    """FILE:STEPS, one stage of the curriculum."""
    path, _, steps = text.rpartition(":")
    if not path or not steps.isdigit() or int(steps) <= 0:
        raise argparse.ArgumentTypeError(f"a stage is FILE:STEPS with STEPS > 0, not '{text}'")
    return path, int(steps)


def settle_runtime():
    """Re-executes this script with glibc and OpenMP set for small-matrix training on few cores.

    glibc keeps freed memory instead of returning it: attention's score matrices are allocated
    and freed every layer, and by default the kernel faulted their pages in again each time,
    which made batched matrix products about ten times slower than their arithmetic. OpenMP's
    idle threads sleep instead of spinning in sched_yield, where they took the cores from
    OpenBLAS's threads (10-30% of a step, measured at 256 and 1024 tokens on two cores).
    """
    wanted = {"MALLOC_TRIM_THRESHOLD_": str(1 << 36), "MALLOC_TOP_PAD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 25),
              "OMP_WAIT_POLICY": "PASSIVE"}
    if all(os.environ.get(key) == value for key, value in wanted.items()):
        return
    os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **wanted})


def write_llama2c(model, path):
    """llama2.c's checkpoint format (version 0): a header of seven int32, then f32 weights by kind."""
    a = model.a
    tensors = [model.embedding.weight]
    for name in ("attention_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w1", "w2", "w3"):
        for block in model.blocks:
            part = getattr(block, name)
            tensors.append(part if isinstance(part, nn.Parameter) else part.weight)
    tensors.append(model.norm)
    head_dim = a.dim // a.heads
    cos, sin = rotary_tables(head_dim, a.context, a.rope_base)  # unused by the engine; part of the format
    tensors += [cos, sin]
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("7i", a.dim, a.hidden, a.layers, a.heads, a.kv_heads, a.vocab, a.context))
        for tensor in tensors:
            f.write(tensor.detach().float().contiguous().numpy().tobytes())
    os.replace(path + ".tmp", path)


GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
GGUF_F32 = 0


def read_gguf_f32(path):
    """The f32 tensors of a GGUF file (version 2 or 3) by name, each shaped as PyTorch stores it (rows first)."""
    with open(path, "rb") as f:
        data = f.read()
    offset = 0

    def take(fmt):
        nonlocal offset
        values = struct.unpack_from("<" + fmt, data, offset)
        offset += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def text():
        nonlocal offset
        size = take("Q")
        if offset + size > len(data):
            raise ValueError(f"{path}: a string runs past the end of the file")
        offset += size
        return data[offset - size : offset].decode("utf-8")

    def value(kind):
        if kind == 8:
            return text()
        if kind == 9:
            item_kind, count = take("I"), take("Q")
            return [value(item_kind) for _ in range(count)]
        if kind not in GGUF_SCALARS:
            raise ValueError(f"{path}: unknown metadata type {kind}")
        return take(GGUF_SCALARS[kind])

    magic, version = take("4s"), take("I")
    if magic != b"GGUF" or version not in (2, 3):
        raise ValueError(f"{path}: not a GGUF file of version 2 or 3")
    tensor_count, metadata_count = take("Q"), take("Q")
    metadata = {}
    for _ in range(metadata_count):
        key = text()
        metadata[key] = value(take("I"))
    infos = []
    for _ in range(tensor_count):
        name, dims = text(), take("I")
        shape = [take("Q") for _ in range(dims)]
        infos.append((name, shape, take("I"), take("Q")))
    alignment = metadata.get("general.alignment", 32)
    start = (offset + alignment - 1) // alignment * alignment
    tensors = {}
    for name, shape, kind, tensor_offset in infos:
        if kind != GGUF_F32:
            raise ValueError(f"{path}: tensor {name} is of type {kind}; only f32 files can start a training run")
        count = math.prod(shape)
        begin = start + tensor_offset
        if begin + 4 * count > len(data):
            raise ValueError(f"{path}: tensor {name} runs past the end of the file")
        values = torch.frombuffer(bytearray(data[begin : begin + 4 * count]), dtype=torch.float32)
        tensors[name] = values.reshape(list(reversed(shape)))  # GGUF lists the fastest-varying dimension first
    return tensors


def load_gguf_weights(model, path):
    """Sets the model's weights from a GGUF file of the same shape, as `snapstream convert` writes it."""
    tensors = read_gguf_f32(path)
    names = {"embedding.weight": "token_embd.weight", "norm": "output_norm.weight"}
    parts = {"attention_norm": "attn_norm", "wq.weight": "attn_q", "wk.weight": "attn_k", "wv.weight": "attn_v",
             "wo.weight": "attn_output", "ffn_norm": "ffn_norm", "w1.weight": "ffn_gate", "w2.weight": "ffn_down",
             "w3.weight": "ffn_up"}
    for layer in range(len(model.blocks)):
        for ours, theirs in parts.items():
            names[f"blocks.{layer}.{ours}"] = f"blk.{layer}.{theirs}.weight"
    state = model.state_dict()
    for ours, theirs in names.items():
        if theirs not in tensors or tensors[theirs].shape != state[ours].shape:
            raise ValueError(f"{path}: {theirs} is missing or not of shape {list(state[ours].shape)}")
        state[ours] = tensors[theirs]
    model.load_state_dict(state)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stage", dest="stages", type=parse_stage, action="append", required=True,
                   help="FILE:STEPS, instances JSONL from `snapstream tasks` trained on for STEPS steps; "
                        "repeat for a curriculum, stages run in the order given")
    p.add_argument("--held-out", required=True, help="instances JSONL with another seed")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--hidden", type=int, default=384)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--rope-base", type=float, default=10000.0)
    p.add_argument("--norm-eps", type=float, default=1e-5)
    p.add_argument("--batch-tokens", type=int, default=8192, help="tokens per step; instances of one length make a batch")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--answer-weight", type=float, default=10.0, help="loss weight of answer tokens against haystack ones")
    p.add_argument("--haystack-weight", type=float, default=1.0, help="loss weight of the prompt's tokens (0: answers only)")
    p.add_argument("--init-from", help="start from this GGUF file's weights (f32, the same shape) instead of random ones")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    settle_runtime()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    # Each stage's instances grouped by length: a step's batch is all of one length (no padding),
    # as many instances as fit in --batch-tokens, and a stage's steps take its lengths in turn.
    stages = []
    for path, steps in a.stages:
        by_length = {}
        for instance in read_instances(path):
            by_length.setdefault(instance["length"], []).append(instance)
        stages.append((path, steps, by_length))
    total_steps = sum(steps for _, steps, _ in stages)
    held_out = read_instances(a.held_out)
    tasks = sorted({instance["task"] for instance in held_out})
    model = Model(a)
    for name, parameter in model.named_parameters():
        if parameter.dim() == 2:
            nn.init.normal_(parameter, std=0.02 / (math.sqrt(2 * a.layers) if name.endswith(("wo.weight", "w2.weight")) else 1.0))
    if a.init_from:
        load_gguf_weights(model, a.init_from)
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    checkpoint_path = os.path.join(a.out_dir, "checkpoint.pt")
    step, seconds_before = 0, 0.0
    if os.path.exists(checkpoint_path):
        state = torch.load(checkpoint_path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        step, seconds_before = state["step"], state.get("seconds", 0.0)
        print(f"resumed at step {step}")
    log_path = os.path.join(a.out_dir, "log.csv")
    log = open(log_path, "a", newline="")
    writer = csv.writer(log)
    if step == 0:
        writer.writerow(["step", "seconds", "stage", "length", "loss", "answer_loss", "batch_accuracy", "held_out_accuracy"] +
                        [f"accuracy_{task}" for task in tasks])
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{parameters} parameters, {len(stages)} stages of {total_steps} steps, {len(held_out)} held out")
    order = random.Random(a.seed)
    start = time.time() - seconds_before
    while step < total_steps:
        lr = a.lr * min(1.0, (step + 1) / a.warmup) * 0.5 * (1 + math.cos(math.pi * step / total_steps))
        for group in optimizer.param_groups:
            group["lr"] = lr
        stage, first_step = 0, 0
        while step >= first_step + stages[stage][1]:
            first_step += stages[stage][1]
            stage += 1
        by_length = stages[stage][2]
        lengths = sorted(by_length)
        # The batch of a step depends only on the seed and the step, so a resumed run sees the same data.
        order.seed(a.seed * 1000003 + step)
        length = lengths[(step - first_step) % len(lengths)]
        pool = by_length[length]
        chosen = order.sample(pool, min(len(pool), max(1, a.batch_tokens // length)))
        inputs, targets, weights, answer_mask = batch_of(chosen, a.answer_weight, a.haystack_weight)
        logits = model(inputs)
        losses = F.cross_entropy(logits.reshape(-1, a.vocab), targets.reshape(-1), reduction="none").view_as(weights)
        loss = (losses * weights).sum() / weights.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        answer_loss = (losses * answer_mask).sum().item() / max(1, answer_mask.sum().item())
        # The share of the batch's own answers right, read off the forward pass already made: a cheap view of how the
        # current stage goes while the held-out set (at the final length) still says 0.
        hits = logits.argmax(-1) == targets
        answered = [bool(hits[row, begin - 1 : end - 1].all()) for row, instance in enumerate(chosen) for begin, end in answer_spans(instance)]
        batch_accuracy = sum(answered) / len(answered)
        accuracy = {}
        if step % a.eval_every == 0 or step == total_steps:
            accuracy = answer_accuracy(model, held_out, max(1, a.batch_tokens // a.context))
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
                        "step": step, "seconds": time.time() - start}, checkpoint_path + ".tmp")
            os.replace(checkpoint_path + ".tmp", checkpoint_path)
            write_llama2c(model, os.path.join(a.out_dir, "model.bin"))
        overall = round(sum(accuracy.values()) / len(accuracy), 4) if accuracy else ""
        writer.writerow([step, round(time.time() - start, 1), stage + 1, length, round(loss.item(), 4), round(answer_loss, 4), round(batch_accuracy, 4), overall] +
                        [round(accuracy[task], 4) if task in accuracy else "" for task in tasks])
        log.flush()
        if step % 10 == 0 or accuracy:
            print(f"step {step} stage {stage + 1} length {length} loss {loss.item():.3f} answer {answer_loss:.3f} batch accuracy {batch_accuracy:.2f} lr {lr:.2e} "
                  f"{time.time() - start:.0f}s" + (" held-out " + " ".join(f"{task} {value:.3f}" for task, value in accuracy.items())
                                                   if accuracy else ""), flush=True)

if __name__ == "__main__":
    main()
