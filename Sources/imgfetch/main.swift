import CMallocTuning
import Glibc
import ImgFetchCLI

// Big decode buffers are reused across decode threads instead of kept once per thread: the large
// set peaked at 99 MiB with glibc's defaults (see CMallocTuning).
CMallocTuning_shareDecodeMemoryAcrossThreads()

exit(ImgFetchCommand.run(Array(CommandLine.arguments.dropFirst())))
