"""ShuffleNet (v1) stage: a strided unit (concat with avg-pooled input) then stride-1 units with grouped 1x1 convs,
channel shuffle and 3x3 depthwise convs, batch norm in eval mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 240
out_channels = 480
height = 56
width = 56
groups = 3
num_units = 4        # ~17 GFLOP; ~7.9 ms on an H200 (eager fp32, no TF32); ~0.8 GB peak


def _bn(c, gamma=(0.8, 1.2)):
    bn = nn.BatchNorm2d(c)
    bn.running_mean.uniform_(-0.2, 0.2)
    bn.running_var.uniform_(0.5, 1.5)
    nn.init.uniform_(bn.weight, *gamma)
    nn.init.uniform_(bn.bias, -0.1, 0.1)
    return bn


def _conv(cin, cout, k, stride=1, groups=1):
    conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
    nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
    return conv


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, groups, stride):
        super().__init__()
        self.stride, self.groups = stride, groups
        branch_out = cout - cin if stride == 2 else cout
        mid = cout // 4
        self.gconv1 = _conv(cin, mid, 1, groups=groups)
        self.bn1 = _bn(mid)
        self.dw = _conv(mid, mid, 3, stride, groups=mid)
        self.bn2 = _bn(mid)
        self.gconv2 = _conv(mid, branch_out, 1, groups=groups)
        self.bn3 = _bn(branch_out, (0.4, 0.7))

    def forward(self, x):
        out = F.relu(self.bn1(self.gconv1(x)))
        n, c, h, w = out.shape  # channel shuffle
        out = out.view(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        out = self.bn2(self.dw(out))
        out = self.bn3(self.gconv2(out))
        if self.stride == 2:
            return F.relu(torch.cat([F.avg_pool2d(x, 3, 2, 1), out], dim=1))
        return F.relu(x + out)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups, num_units):
        super().__init__()
        units = [ShuffleUnit(in_channels, out_channels, groups, 2)]
        units += [ShuffleUnit(out_channels, out_channels, groups, 1) for _ in range(num_units - 1)]
        self.units = nn.Sequential(*units)

    def forward(self, x):
        return self.units(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups, num_units]


CATEGORY = "cnn"
TAGS = ["shufflenet", "grouped-conv", "channel-shuffle", "depthwise", "batchnorm"]
SMALL = {"batch_size": 2, "in_channels": 24, "out_channels": 48, "height": 16, "width": 16}
HELD_OUT = [{"batch_size": 37, "height": 57, "width": 55}]
HELD_OUT_SMALL = [{"batch_size": 3, "in_channels": 12, "out_channels": 36, "height": 13, "width": 11, "num_units": 3}]
# low precision: the reference itself is off fp32 by bf16 0.008 rel_l2, 0.06 elementwise; fp16 0.005 rel_l2, 0.04 elementwise
TOLERANCE = {"bf16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.02}, "fp16": {"atol": 0.08, "rtol": 0.08, "rel_l2": 0.015}}
