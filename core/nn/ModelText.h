#pragma once

#include "core/nn/NetworkSpec.h"

#include <string>
#include <vector>

namespace sgdscope {

/// The model line (--model, a --config file's "model", the window's model line): layers separated by commas,
/// each written as
///   denseN                      a dense layer of N outputs
///   convCxK[xK2][sS][pP]        a convolution of C output channels, a K x K2 kernel (K x K when K2 is left
///                               out), stride S (default 1) and P rows and columns of zeros on every side
///                               (default 0): conv6x5x5p2, conv16x3s2
///   maxpoolK[xK2], avgpoolK[xK2] the largest value, or the mean, of each K x K2 window; the windows lie side by
///                               side (stride = window) and must cover the input exactly
///   relu | tanh | sigmoid | identity   an activation
///   flatten                     an image read as a vector, channel by channel (as nn.Flatten on NCHW)
///   inputCxHxW                  first only: each sample's features read as an image of C channels, H x W
///                               (by default the data's own image shape, where it has one: IDX images)
/// A line that names no activation gets the run's --activation after every dense and convolution layer but the
/// last; a flatten is implied before a dense layer that reads an image (networkFromModel()).
std::vector<LayerSpec> parseModelText(const std::string& text);

/// One layer as the model line writes it ("conv6x5x5p2"; an image's shape "input1x28x28").
std::string layerText(const LayerSpec& layer);
/// The layers as a model line.
std::string modelText(const std::vector<LayerSpec>& layers);
/// Whether the line names any activation (then it is taken as written).
bool namesActivations(const std::vector<LayerSpec>& layers);

/// The network a model line describes, for samples of `data`'s shape (flat features, or an image that arrives as
/// its flat features): an input reshape first if the line begins with image layers and names no input shape,
/// `activation` after every weighted layer but the last if the line names none, a flatten before a dense layer
/// that reads an image and at the end if the last layer makes one. Not checked: call NetworkSpec::check().
NetworkSpec networkFromModel(
    const std::vector<LayerSpec>& written, const TensorShape& data, Activation activation, LossKind loss);

} // namespace sgdscope
