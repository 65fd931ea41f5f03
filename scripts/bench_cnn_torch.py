"""PyTorch twins of syncbench's CNNs (bench-core/src/workload/cnn/) timed beside
`syncbench profile`; run by scripts/bench-cnn-vs-pytorch.sh (the CPU) and scripts/gpu-check.sh
(DEVICE=cuda:N: ours through LibTorch against PyTorch eager on the same GPU, the papers'
networks at batch 128). Environment: DEVICE (cpu), SYNCBENCH (target/release/syncbench), OUT
(results/bench)."""
import csv, os, platform, subprocess, sys, time, tomllib
import torch
import torch.nn as nn
import torch.nn.functional as F

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
DEVICE = os.environ.get("DEVICE", "cpu")
GPU = DEVICE.startswith("cuda")
# PyTorch's name for the device ours calls torch-cpu (LibTorch on the CPU).
TORCH_DEVICE = "cpu" if DEVICE in ("cpu", "torch-cpu") else DEVICE
# The papers' networks at their batch (the GPU table); PAPER_CASES=1 runs it on any device, and
# BATCH= shrinks the batch for a dry run of scripts/gpu-check.sh without a GPU.
PAPER = GPU or os.environ.get("PAPER_CASES") == "1"
PAPER_BATCH = int(os.environ.get("BATCH", "128"))
SYNCBENCH = os.environ.get("SYNCBENCH", "target/release/syncbench")
OUT = os.environ.get("OUT", "results/bench")
# A GPU needs more warm-up (cuDNN's algorithm choice, the allocator) and its steps are short.
WARMUP, STEPS = (5, 20) if GPU else (2, 5)


def pool(x):
    return F.max_pool2d(x, 2) if x.shape[-1] >= 2 else x


def pooled(side, n):
    for _ in range(n):
        side = side // 2 if side >= 2 else side
    return side


class HopCnn(nn.Module):
    def __init__(s, w, h, side, classes):
        super().__init__()
        p = pooled(side, 2)
        s.c1, s.c2 = nn.Conv2d(3, w, 5, padding=2), nn.Conv2d(w, w, 5, padding=2)
        s.f1, s.f2 = nn.Linear(w * p * p, h), nn.Linear(h, max(h // 2, 1))
        s.out = nn.Linear(max(h // 2, 1), classes)

    def forward(s, x):
        x = pool(F.relu(s.c1(x)))
        x = pool(F.relu(s.c2(x)))
        x = F.relu(s.f1(x.flatten(1)))
        return s.out(F.relu(s.f2(x)))


class AlexnetSmall(nn.Module):
    def __init__(s, w, h, side, classes):
        super().__init__()
        p = pooled(side, 3)
        s.c1, s.c2 = nn.Conv2d(3, w, 5, padding=2), nn.Conv2d(w, 2 * w, 5, padding=2)
        s.c3 = nn.Conv2d(2 * w, 2 * w, 3, padding=1)
        s.f1, s.out = nn.Linear(2 * w * p * p, h), nn.Linear(h, classes)

    def forward(s, x):
        for c in (s.c1, s.c2, s.c3):
            x = pool(F.relu(c(x)))
        return s.out(F.relu(s.f1(x.flatten(1))))


class Vgg11(nn.Module):
    BLOCKS = [[1], [2], [4, 4], [8, 8], [8, 8]]

    def __init__(s, w, h, side, classes):
        super().__init__()
        layers, frm = [], 3
        for block in s.BLOCKS:
            for m in block:
                layers.append(nn.Sequential(nn.Conv2d(frm, m * w, 3, padding=1, bias=False), nn.BatchNorm2d(m * w)))
                frm = m * w
        s.convs = nn.ModuleList(layers)
        p = pooled(side, len(s.BLOCKS))
        s.f1, s.f2, s.out = nn.Linear(frm * p * p, h), nn.Linear(h, h), nn.Linear(h, classes)

    def forward(s, x):
        i = 0
        for block in s.BLOCKS:
            for _ in block:
                x = F.relu(s.convs[i](x))
                i += 1
            x = pool(x)
        x = F.relu(s.f1(x.flatten(1)))
        return s.out(F.relu(s.f2(x)))


class Block(nn.Module):
    def __init__(s, frm, to, stride):
        super().__init__()
        s.c1, s.n1 = nn.Conv2d(frm, to, 3, stride, 1, bias=False), nn.BatchNorm2d(to)
        s.c2, s.n2 = nn.Conv2d(to, to, 3, 1, 1, bias=False), nn.BatchNorm2d(to)
        s.proj = None
        if stride != 1 or frm != to:
            s.proj = nn.Sequential(nn.Conv2d(frm, to, 1, stride, bias=False), nn.BatchNorm2d(to))

    def forward(s, x):
        y = s.n2(s.c2(F.relu(s.n1(s.c1(x)))))
        return F.relu(y + (s.proj(x) if s.proj is not None else x))


class Resnet(nn.Module):
    def __init__(s, n, w, classes):
        super().__init__()
        s.stem, s.sn = nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w)
        blocks, frm = [], w
        for stage, m in enumerate([1, 2, 4]):
            for b in range(n):
                blocks.append(Block(frm, m * w, 2 if stage > 0 and b == 0 else 1))
                frm = m * w
        s.blocks, s.out = nn.Sequential(*blocks), nn.Linear(frm, classes)

    def forward(s, x):
        x = s.blocks(F.relu(s.sn(s.stem(x))))
        return s.out(x.mean((2, 3)))


class Bottleneck(nn.Module):
    def __init__(s, frm, m, stride):
        super().__init__()
        to = 4 * m
        s.c1, s.n1 = nn.Conv2d(frm, m, 1, bias=False), nn.BatchNorm2d(m)
        s.c2, s.n2 = nn.Conv2d(m, m, 3, stride, 1, bias=False), nn.BatchNorm2d(m)
        s.c3, s.n3 = nn.Conv2d(m, to, 1, bias=False), nn.BatchNorm2d(to)
        s.proj = None
        if stride != 1 or frm != to:
            s.proj = nn.Sequential(nn.Conv2d(frm, to, 1, stride, bias=False), nn.BatchNorm2d(to))

    def forward(s, x):
        y = F.relu(s.n1(s.c1(x)))
        y = s.n3(s.c3(F.relu(s.n2(s.c2(y)))))
        return F.relu(y + (s.proj(x) if s.proj is not None else x))


class Resnet50(nn.Module):
    def __init__(s, w, classes):
        super().__init__()
        s.stem, s.sn = nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w)
        blocks, frm = [], w
        for stage, (n, m) in enumerate(zip([3, 4, 6, 3], [1, 2, 4, 8])):
            for b in range(n):
                blocks.append(Bottleneck(frm, m * w, 2 if stage > 0 and b == 0 else 1))
                frm = 4 * m * w
        s.blocks, s.out = nn.Sequential(*blocks), nn.Linear(frm, classes)

    def forward(s, x):
        x = s.blocks(F.relu(s.sn(s.stem(x))))
        return s.out(x.mean((2, 3)))


def build(model, w, h, side, classes):
    if model == "resnet50":
        return Resnet50(w, classes)
    if model == "hop-cnn":
        return HopCnn(w, h, side, classes)
    if model == "alexnet-small":
        return AlexnetSmall(w, h, side, classes)
    if model == "vgg11":
        return Vgg11(w, h, side, classes)
    n = {"resnet20": 3, "resnet32": 5, "resnet56": 9, "resnet110": 18}[model]
    return Resnet(n, w, classes)


def torch_seconds(model, w, h, side, batch, threads, classes=10):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    dev = torch.device(TORCH_DEVICE)
    net = build(model, w, h, side, classes).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(batch, 3, side, side, device=dev)
    y = torch.randint(0, classes, (batch,), device=dev)
    # The device's own stream: a bare synchronize() waits for the current device only.
    sync = (lambda: torch.cuda.synchronize(dev)) if GPU else (lambda: None)
    times = []
    for i in range(WARMUP + STEPS):
        sync()
        t = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        sync()
        if i >= WARMUP:
            times.append(time.perf_counter() - t)
    params = sum(p.numel() for p in net.parameters())
    return sorted(times)[len(times) // 2], params


def ours_seconds(model, w, h, side, batch, classes=10):
    out = subprocess.run(
        [SYNCBENCH, "profile", "--model", model, "--batch", str(batch),
         "--width", str(w), "--hidden", str(h), "--side", str(side), "--classes", str(classes),
         "--warmup", str(WARMUP), "--steps", str(STEPS), "--device", DEVICE],
        check=True, capture_output=True, text=True)
    p = tomllib.loads(out.stdout)
    return p["devices"][0]["seconds_per_batch"], p["bytes_per_update"] // 4


CASES = [  # model, width, hidden, side, batch
    ("hop-cnn", 8, 32, 16, 32),
    ("alexnet-small", 8, 32, 16, 32),
    ("vgg11", 8, 32, 16, 32),
    ("resnet20", 4, 32, 16, 32),
    ("resnet20", 16, 32, 32, 32),
    ("resnet50", 4, 32, 16, 32),
]

# On a GPU: the papers' networks at their width and batch (CIFAR-100 for ResNet-50 and -110).
GPU_CASES = [  # model, width, hidden, side, batch, classes
    ("hop-cnn", 64, 384, 32, PAPER_BATCH, 10),
    ("alexnet-small", 64, 384, 32, PAPER_BATCH, 10),
    ("vgg11", 64, 512, 32, PAPER_BATCH, 10),
    ("resnet20", 16, 384, 32, PAPER_BATCH, 10),
    ("resnet50", 64, 384, 32, PAPER_BATCH, 100),
    ("resnet110", 16, 384, 32, PAPER_BATCH, 100),
]


def write_table(stem, title, note, rows):
    """rows as stem.csv and as a Markdown table under title and note in stem.md."""
    with open(stem + ".csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    with open(stem + ".md", "w") as f:
        f.write(f"# {title}\n\n{note}\n\n")
        keys = list(rows[0].keys())
        f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(r[k]) for k in keys) + " |\n")
    print(f"wrote {stem}.csv and .md")


def gpu_bench():
    rows = []
    name = torch.cuda.get_device_name(torch.device(DEVICE)) if GPU else platform.processor() or "the CPU"
    for model, w, h, side, batch, classes in GPU_CASES:
        ours, theirs = [], []
        for _ in range(ROUNDS):
            s, ours_params = ours_seconds(model, w, h, side, batch, classes)
            ours.append(s)
            s, torch_params = torch_seconds(model, w, h, side, batch, 1, classes)
            theirs.append(s)
        assert ours_params == torch_params, (model, w, ours_params, torch_params)
        best = lambda v: batch / min(v)
        row = {
            "model": model, "width": w, "side": side, "batch": batch, "classes": classes,
            "parameters": ours_params,
            "ours_images_per_s": round(best(ours), 1),
            "torch_eager_images_per_s": round(best(theirs), 1),
            "ours_vs_torch": round(best(ours) / best(theirs), 3),
        }
        rows.append(row)
        print(row, flush=True)
    write_table(
        f"{OUT}/cnn-vs-pytorch-{'cuda' if GPU else DEVICE}",
        f"CNN training step on {name} ({DEVICE}): syncbench (burn 0.22, {'flex' if DEVICE == 'cpu' else 'LibTorch'} backend) vs PyTorch {torch.__version__} eager",
        f"Best of {ROUNDS} rounds, each the median of {STEPS} steps after {WARMUP} warm-up; images/s of forward + backward + SGD (momentum 0.9, weight decay 5e-4). Ours moves the parameters and the gradient through one flat host buffer each step (the form every sync mode exchanges) and runs the SGD step on the host; PyTorch keeps everything on the device.",
        rows)


if PAPER:
    os.makedirs(OUT, exist_ok=True)
    gpu_bench()
    sys.exit(0)

rows = []
cores = os.cpu_count() or 1
for model, w, h, side, batch in CASES:
    ours, t1, tn = [], [], []
    for _ in range(ROUNDS):
        s, ours_params = ours_seconds(model, w, h, side, batch)
        ours.append(s)
        s, torch_params = torch_seconds(model, w, h, side, batch, 1)
        t1.append(s)
        tn.append(torch_seconds(model, w, h, side, batch, cores)[0])
    # The same architecture: parameter counts must agree exactly.
    assert ours_params == torch_params, (model, w, ours_params, torch_params)
    best = lambda v: batch / min(v)
    row = {
        "model": model, "width": w, "side": side, "batch": batch,
        "parameters_ours": ours_params, "parameters_torch": torch_params,
        "ours_images_per_s": round(best(ours), 1),
        "torch_1thread_images_per_s": round(best(t1), 1),
        f"torch_{cores}threads_images_per_s": round(best(tn), 1),
        "ours_vs_torch_1thread": round(best(ours) / best(t1), 3),
    }
    rows.append(row)
    print(row, flush=True)

write_table(
    f"{OUT}/cnn-vs-pytorch",
    f"CNN training step: syncbench (burn flex, 1 thread) vs PyTorch {torch.__version__} on {platform.node()}",
    f"Best of {ROUNDS} rounds, each the median of {STEPS} steps after {WARMUP} warm-up; images/s of forward + backward + SGD (momentum 0.9, weight decay 5e-4).",
    rows)
