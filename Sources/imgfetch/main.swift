import CMallocTuning
import Glibc
import ImgFetchCLI

// libjpeg's whole-image coefficient arrays (36 MB for a progressive 12-megapixel JPEG) are mapped
// and unmapped on their own instead of coming from malloc's arenas. By default glibc raises its
// mmap threshold to the size of the first big buffer freed; from then on each decode thread's
// arena kept its own copy of that memory, and two threads decoding such files one after the other
// peaked at 99 MiB instead of 64 MiB. A fixed threshold also stops the raising. The price is a
// page fault per 4 KiB of such buffers; smaller allocations keep their memory (see the C side).
CMallocTuning_returnBigBuffersToTheSystem()

exit(ImgFetchCommand.run(Array(CommandLine.arguments.dropFirst())))
