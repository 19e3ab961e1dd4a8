"""EfficientNet-B0-style network: MBConv blocks with SiLU, depthwise convs and squeeze-and-excitation, BN in eval mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
image_size = 224
base = 32            # stem width; stage widths scale with it
num_classes = 1000   # ~25 GFLOP; ~6.4 ms on an H200 (eager fp32, no TF32); ~0.4 GB peak


def _bn(c, gamma=(0.8, 1.2)):
    bn = nn.BatchNorm2d(c)
    bn.running_mean.uniform_(-0.1, 0.1)
    bn.running_var.uniform_(0.5, 1.5)
    nn.init.uniform_(bn.weight, *gamma)
    nn.init.uniform_(bn.bias, -0.05, 0.05)
    return bn


def _conv(cin, cout, k, stride=1, groups=1):
    conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
    nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
    return conv


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hid = cin * expand
        self.expand = nn.Sequential(_conv(cin, hid, 1), _bn(hid), nn.SiLU()) if expand != 1 else nn.Identity()
        self.dw = nn.Sequential(_conv(hid, hid, k, stride, groups=hid), _bn(hid, (1.2, 1.6)), nn.SiLU())
        sq = max(1, cin // 4)
        self.se_reduce = nn.Conv2d(hid, sq, 1)
        self.se_expand = nn.Conv2d(sq, hid, 1)
        self.residual = stride == 1 and cin == cout
        # larger dw gain offsets the SE gate (~0.5); residual branches are damped
        self.project = nn.Sequential(_conv(hid, cout, 1), _bn(cout, (0.4, 0.7) if self.residual else (0.8, 1.2)))

    def forward(self, x):
        h = self.dw(self.expand(x))
        s = h.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        out = self.project(h * s)
        return x + out if self.residual else out


class Model(nn.Module):
    def __init__(self, base, num_classes):
        super().__init__()
        # expansion, kernel, stride, output channels (for base 32), repeats
        cfg = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
               (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]
        layers = [_conv(3, base, 3, 2), _bn(base), nn.SiLU()]
        cin = base
        for e, k, s, c, n in cfg:
            cout = c * base // 32
            for i in range(n):
                layers.append(MBConv(cin, cout, k, s if i == 0 else 1, e))
                cin = cout
        last = 40 * base
        layers += [_conv(cin, last, 1), _bn(last), nn.SiLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(last, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def get_inputs():
    # noise images with a per-image contrast and per-channel colour shift (as real photos vary)
    x = torch.randn(batch_size, 3, image_size, image_size) * (0.5 + torch.rand(batch_size, 1, 1, 1))
    return [x + torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [base, num_classes]


CATEGORY = "cnn"
TAGS = ["efficientnet", "mbconv", "squeeze-excite", "depthwise", "batchnorm"]
SMALL = {"batch_size": 2, "image_size": 64, "base": 8, "num_classes": 10}
HELD_OUT = [{"batch_size": 19, "image_size": 229, "num_classes": 1001}]
HELD_OUT_SMALL = [{"batch_size": 3, "image_size": 67, "base": 8, "num_classes": 7}]
# low precision: the reference itself is off fp32 by bf16 0.01 rel_l2, 0.08 elementwise; fp16 0.01 rel_l2, 0.07 elementwise
TOLERANCE = {"bf16": {"atol": 0.2, "rtol": 0.2, "rel_l2": 0.03}, "fp16": {"atol": 0.15, "rtol": 0.15, "rel_l2": 0.03}}
