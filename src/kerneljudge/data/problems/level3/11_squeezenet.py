"""SqueezeNet 1.1: fire modules (1x1 squeeze, parallel 1x1 and 3x3 expand, concat) with max pooling and a conv classifier."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
image_size = 224
base = 16            # squeeze width of the first fire module
num_classes = 1000   # ~45 GFLOP; ~3.7 ms on an H200 (eager fp32, no TF32); ~0.8 GB peak


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        s = F.relu(self.squeeze(x))
        return F.relu(torch.cat([self.expand1(s), self.expand3(s)], dim=1))


class Model(nn.Module):
    def __init__(self, base, num_classes):
        super().__init__()
        b = base
        self.features = nn.Sequential(
            nn.Conv2d(3, 4 * b, 3, stride=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(4 * b, b, 4 * b), Fire(8 * b, b, 4 * b), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(8 * b, 2 * b, 8 * b), Fire(16 * b, 2 * b, 8 * b), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(16 * b, 3 * b, 12 * b), Fire(24 * b, 3 * b, 12 * b), Fire(24 * b, 4 * b, 16 * b), Fire(32 * b, 4 * b, 16 * b),
        )
        self.classifier = nn.Conv2d(32 * b, num_classes, 1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.uniform_(m.bias, -0.05, 0.05)
        nn.init.normal_(self.classifier.weight, 0.0, 0.02)

    def forward(self, x):
        x = F.relu(self.classifier(self.features(x)))
        return x.mean(dim=(2, 3))


def get_inputs():
    # noise images with a per-image contrast and per-channel colour shift (as real photos vary)
    x = torch.randn(batch_size, 3, image_size, image_size) * (0.5 + torch.rand(batch_size, 1, 1, 1))
    return [x + torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [base, num_classes]


CATEGORY = "cnn"
TAGS = ["squeezenet", "fire-module", "concat"]
SMALL = {"batch_size": 2, "image_size": 40, "base": 4, "num_classes": 10}
HELD_OUT = [{"batch_size": 47, "image_size": 227, "num_classes": 1001}]
HELD_OUT_SMALL = [{"batch_size": 3, "image_size": 45, "base": 4, "num_classes": 7}]
# low precision: the reference itself is off fp32 by bf16 0.007 rel_l2, 0.02 elementwise; fp16 0.006 rel_l2, 0.02 elementwise
TOLERANCE = {"bf16": {"atol": 0.05, "rtol": 0.05, "rel_l2": 0.02}, "fp16": {"atol": 0.04, "rtol": 0.04, "rel_l2": 0.015}}
