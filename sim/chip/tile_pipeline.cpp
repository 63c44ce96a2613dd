#include "chip/tile_pipeline.hpp"

namespace npusim {

template class BasicTilePipeline<TilePipelineHost>;

}  // namespace npusim
