// include/ncclpm/read/pickle.h
//
// Reads a Python pickle of plain data (dicts, lists, tuples, strings, numbers,
// booleans, None) without Python: PyTorch writes its Flight Recorder dumps
// that way by default (torch's C++ pickler, protocol 2; Python's pickle for
// dumps rewritten by tools). The result is the same data as JSON text, so a
// pickled dump and a JSON one go through one reader.
//
// Only the data opcodes run: no object is ever constructed and no code is
// called. A global (a class or function reference) reads as null, except
// torch.jit._pickle's build_*list/restore_type_tag wrappers, which read as the
// data they wrap.
#pragma once

#include <string>
#include <string_view>

#include "ncclpm/util/result.h"

namespace ncclpm::read {

/// JSON text of the pickled value. A damaged or unsupported stream is an
/// error naming the byte offset and the opcode.
Result<std::string> pickle_to_json(std::string_view data);

/// Whether `head` starts like a binary pickle (the PROTO opcode, protocol 2-5).
bool looks_like_pickle(std::string_view head);

}  // namespace ncclpm::read
