import Glibc
import ImgFetchCLI

exit(ImgFetchCommand.run(Array(CommandLine.arguments.dropFirst())))
