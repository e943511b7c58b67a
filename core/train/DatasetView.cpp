#include "core/train/DatasetView.h"

namespace sgdscope {

SampleView<float> viewOf(const Dataset& data)
{
    SampleView<float> v;
    v.inputs = data.inputs.data();
    v.features = data.features();
    v.count = data.size();
    if (data.isClassification()) {
        v.labels = data.labels.data();
    } else {
        v.targets = data.targets.data();
        v.targetRows = static_cast<int>(data.targets.rows());
    }
    return v;
}

} // namespace sgdscope
