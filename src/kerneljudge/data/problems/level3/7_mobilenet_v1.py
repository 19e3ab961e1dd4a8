"""MobileNetV1: a strided stem conv then 13 depthwise-separable blocks (3x3 depthwise + 1x1 pointwise, BN eval, ReLU)."""
import torch
import torch.nn as nn

batch_size = 32
image_size = 224
base = 32            # width multiplier 1.0
num_classes = 1000   # ~36 GFLOP; ~3.2 ms on an H200 (eager fp32, no TF32); ~0.7 GB peak


def _conv_bn(cin, cout, k, stride, groups=1):
    conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
    nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
    bn = nn.BatchNorm2d(cout)
    bn.running_mean.uniform_(-0.2, 0.2)
    bn.running_var.uniform_(0.5, 1.5)
    nn.init.uniform_(bn.weight, 0.8, 1.2)
    nn.init.uniform_(bn.bias, -0.1, 0.1)
    return nn.Sequential(conv, bn, nn.ReLU(inplace=True))


class Model(nn.Module):
    def __init__(self, base, num_classes):
        super().__init__()
        # (output multiple of base, stride) for each depthwise-separable block
        cfg = [(2, 1), (4, 2), (4, 1), (8, 2), (8, 1), (16, 2)] + [(16, 1)] * 5 + [(32, 2), (32, 1)]
        layers, cin = [_conv_bn(3, base, 3, 2)], base
        for mult, stride in cfg:
            cout = base * mult
            layers += [_conv_bn(cin, cin, 3, stride, groups=cin), _conv_bn(cin, cout, 1, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def get_inputs():
    # noise images with a per-image contrast and per-channel colour shift (as real photos vary)
    x = torch.randn(batch_size, 3, image_size, image_size) * (0.5 + torch.rand(batch_size, 1, 1, 1))
    return [x + torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [base, num_classes]


CATEGORY = "cnn"
TAGS = ["mobilenet", "depthwise", "batchnorm"]
SMALL = {"batch_size": 2, "image_size": 32, "base": 8, "num_classes": 10}
HELD_OUT = [{"batch_size": 23, "image_size": 229, "num_classes": 1001}]
HELD_OUT_SMALL = [{"batch_size": 3, "image_size": 37, "base": 4, "num_classes": 7}]
# low precision: the reference itself is off fp32 by bf16 0.009 rel_l2, 0.06 elementwise; fp16 0.008 rel_l2, 0.05 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.02}, "fp16": {"atol": 0.1, "rtol": 0.1, "rel_l2": 0.02}}
