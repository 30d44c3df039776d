// The one C++ file of core: double-conversion (a C++ library) has no C
// interface. It gives the shortest digits of a positive finite double; the
// layout and everything else is core/number.c.
#include <double-conversion/double-conversion.h>

extern "C" __attribute__((visibility("hidden"))) int sebt_number_dc_shortest(double v, char *digits, int size,
                                                                             int *point);

extern "C" int sebt_number_dc_shortest(double v, char *digits, int size, int *point)
{
    bool sign = false;
    int length = 0;
    double_conversion::DoubleToStringConverter::DoubleToAscii(
        v, double_conversion::DoubleToStringConverter::SHORTEST, 0, digits, size, &sign, &length, point);
    return length;
}
